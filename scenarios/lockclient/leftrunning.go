package lockclient

import "sync/atomic"

// leftRunning counts the clients whose Close did not return in time
// (GLIDE's core, see glideCloseBound): each is still running inside this
// process, and may take a core for good.
var leftRunning atomic.Int64

// LeftRunning is how many clients this process closed without their
// Close returning. A measurement that sees it grow stops starting runs:
// those after it would be measured on a machine the stuck client
// starves, and a new process (--resume) starts clean.
func LeftRunning() int64 { return leftRunning.Load() }
