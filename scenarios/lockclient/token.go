package lockclient

import (
	"crypto/rand"
	"encoding/hex"
)

// newToken is 20 random bytes in hex, new for every acquisition as the
// article asks: a reused token lets a stale holder release a newer lock.
func newToken() string {
	b := make([]byte, 20)
	rand.Read(b)
	return hex.EncodeToString(b)
}
