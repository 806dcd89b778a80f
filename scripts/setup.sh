#!/usr/bin/env bash
# Installs what lockcheck needs on a fresh Debian machine with Go and a
# running Docker engine: debootstrap (server images from Debian's archive),
# gcc (the clock shim), python3-redis (the example external adapter) and
# docker-registry (the registry test's loopback registry).
set -euo pipefail

missing=()
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
/usr/bin/python3 -c 'import redis' >/dev/null 2>&1 || missing+=(python3-redis)
command -v docker-registry >/dev/null 2>&1 || missing+=(docker-registry)

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "lockcheck setup: need ${missing[*]}: run as root, or apt-get install ${missing[*]}" >&2
    exit 2
  fi
  echo "lockcheck setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A machine of this kind starts its engine before a session; when it is
# not answering (it was stopped, or it died), root starts Debian's dockerd
# here rather than fail the first command, and waits for it to answer.
if ! timeout 20 docker info >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ] && [ -z "${DOCKER_HOST:-}" ] && [ -x /usr/sbin/dockerd ] && ! pgrep -x dockerd >/dev/null; then
    echo "lockcheck setup: no Docker engine answers: starting /usr/sbin/dockerd (log: /var/log/dockerd.log)" >&2
    setsid nohup /usr/sbin/dockerd >>/var/log/dockerd.log 2>&1 </dev/null &
    for _ in $(seq 60); do
      timeout 5 docker info >/dev/null 2>&1 && break
      sleep 1
    done
  fi
  if ! timeout 20 docker info >/dev/null 2>&1; then
    echo "lockcheck setup: no Docker engine answers: start dockerd (or set DOCKER_HOST)" >&2
    exit 2
  fi
fi
