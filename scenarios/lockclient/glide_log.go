//go:build cgo

package lockclient

/*
#include <stdlib.h>

// The logger entry points of GLIDE's Rust core, which its Go module links
// in; the module's Go code does not wrap them. Level OFF is 5.
struct LogResult;
extern struct LogResult *init(const int *level, const char *file_name);
extern void free_log_result(struct LogResult *result);
*/
import "C"

import "sync"

var glideLogOnce sync.Once

// silenceGlideLog turns GLIDE's core logger off before the first client.
// Left alone it prints WARN lines for every timeout and reconnect on
// standard output, where lockcheck prints its report; each of those
// errors already reaches the history as the call's outcome and reason.
func silenceGlideLog() {
	glideLogOnce.Do(func() {
		off := C.int(5)
		r := C.init(&off, nil)
		if r != nil {
			C.free_log_result(r)
		}
	})
}
