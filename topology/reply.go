package topology

import (
	"strconv"
	"strings"

	"github.com/valkey-io/valkey-go"
)

// Nil is how ReplyText shows a nil reply.
const Nil = "(nil)"

// ReplyText renders any reply as one line of text: strings as they are,
// integers in decimal, nil as (nil), arrays and maps in brackets. An error
// reply comes back as a ServerError with the server's exact words; a
// connection failure as the client's error.
func ReplyText(res valkey.ValkeyResult) (string, error) {
	msg, err := res.ToMessage()
	if err != nil {
		if valkey.IsValkeyNil(err) {
			return Nil, nil
		}
		if _, ok := valkey.IsValkeyErr(err); ok {
			return "", ServerError(rawError(msg, err))
		}
		return "", err
	}
	return messageText(msg), nil
}

// ServerError is an error reply, with the server's words as sent
// ("ERR syntax error", not the client library's trimmed form).
type ServerError string

func (e ServerError) Error() string { return string(e) }

// rawError recovers an error reply's full text: valkey-go trims "ERR "
// from its errors, but the message keeps it.
func rawError(msg valkey.ValkeyMessage, err error) string {
	if raw, _ := msg.ToString(); raw != "" {
		return raw
	}
	return err.Error()
}

func messageText(m valkey.ValkeyMessage) string {
	if m.IsNil() {
		return Nil
	}
	if err := m.Error(); err != nil {
		return rawError(m, err)
	}
	if m.IsInt64() {
		i, _ := m.AsInt64()
		return strconv.FormatInt(i, 10)
	}
	if s, err := m.ToString(); err == nil {
		return s
	}
	if kv, err := m.ToMap(); err == nil && m.IsMap() {
		parts := make([]string, 0, len(kv))
		for k, v := range kv {
			parts = append(parts, k+"="+messageText(v))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	if arr, err := m.ToArray(); err == nil {
		parts := make([]string, len(arr))
		for i, v := range arr {
			parts[i] = messageText(v)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	if f, err := m.AsFloat64(); err == nil {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return m.String()
}
