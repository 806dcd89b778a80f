package scenarios

import (
	"os"
	"runtime"
	"sync"
)

// While any workload drives its clients, the process runs Go code on one
// core fewer than it has (GOMAXPROCS n-1, at least 1), and gets them all
// back when the last workload ends, for the check. The servers run on the
// same machine: on two cores, a second processor for Go mostly spins
// looking for work each time a client blocks on its socket, on the core a
// single-threaded server needs. Alternated in one process (8 clients,
// standalone, op-bound): 36-53k lock calls a second with one, 30-38k with
// two. A GOMAXPROCS in the environment is the user's choice and is kept.
var cores struct {
	sync.Mutex
	users, before int
}

// leaveCore takes one core from Go for a workload's run; the func it
// returns gives it back.
func leaveCore() (giveBack func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	cores.Lock()
	defer cores.Unlock()
	if cores.users == 0 {
		cores.before = runtime.GOMAXPROCS(0)
		runtime.GOMAXPROCS(max(1, cores.before-1))
	}
	cores.users++
	var once sync.Once
	return func() {
		once.Do(func() {
			cores.Lock()
			defer cores.Unlock()
			if cores.users--; cores.users == 0 {
				runtime.GOMAXPROCS(cores.before)
			}
		})
	}
}
