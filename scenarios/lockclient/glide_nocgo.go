//go:build !cgo

package lockclient

import "fmt"

// newGlide refuses in a build without cgo: GLIDE's Go client is a thin
// layer over its Rust core, a static library linked in through cgo, so
// without cgo there is no client to run. The rest of lockcheck builds
// without cgo, and this keeps it so.
func newGlide(name string, cfg Config) (Client, error) {
	return nil, fmt.Errorf("client %s: this lockcheck was built without cgo (CGO_ENABLED=0), and Valkey GLIDE's Go client links its Rust core through cgo: rebuild with cgo and a C compiler", name)
}
