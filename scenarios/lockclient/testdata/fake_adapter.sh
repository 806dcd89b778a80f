#!/bin/sh
# A stand-in adapter for the protocol tests: it echoes each request to
# stderr, hangs on the key "hang", exits on the key "die", and answers
# the rest with fixed replies.
while IFS= read -r line; do
	echo "$line" >&2
	case "$line" in
	*'"op":"init"'*) echo '{"status":"ok","name":"fake 1"}' ;;
	*'"key":"hang"'*) sleep 30 ;;
	*'"key":"die"'*) exit 3 ;;
	*'"key":"garbage"'*) echo 'not json' ;;
	*'"op":"acquire"'*) echo '{"status":"ok","token":"t1","fence":0}' ;;
	*'"op":"extend"'*) echo '{"status":"fail"}' ;;
	*'"op":"release"'*) echo '{"status":"fail","error":"ERR unknown command '"'"'DELIFEQ'"'"'"}' ;;
	*'"op":"close"'*) echo '{"status":"ok"}'; exit 0 ;;
	esac
done
