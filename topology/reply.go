package topology

import (
	"strconv"
	"strings"

	"github.com/valkey-io/valkey-go"
)

// Nil is how ReplyText shows a nil reply.
const Nil = "(nil)"

// ReplyText renders any reply as one line of text: strings as they are,
// integers in decimal, nil as (nil), arrays and maps in brackets. Error
// replies come back as the error.
func ReplyText(res valkey.ValkeyResult) (string, error) {
	if err := res.Error(); err != nil {
		return "", err
	}
	msg, err := res.ToMessage()
	if err != nil {
		return "", err
	}
	return messageText(msg), nil
}

func messageText(m valkey.ValkeyMessage) string {
	if m.IsNil() {
		return Nil
	}
	if err := m.Error(); err != nil {
		return err.Error()
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
