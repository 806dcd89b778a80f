package locktest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A scenario the harness refuses, and ExpectFenceHolds for a client that
// draws no fences, fail before anything starts, in one line each.
func TestRefusesBeforeStarting(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Scenario
		opts []Option
		want string
	}{
		{"bad scenario", Scenario{ServerSettings: ServerSettings{Server: "valkey-9.1"}, TrafficSettings: TrafficSettings{Duration: -time.Second}}, nil, "locktest: scenario:"},
		{"fence-holds unfenced", Scenario{ServerSettings: ServerSettings{Server: "valkey-9.1"}, TrafficSettings: TrafficSettings{Duration: time.Second}}, []Option{ExpectFenceHolds}, "ExpectFenceHolds needs a client that draws fences"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fatal{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				(&Env{}).Run(f, tc.s, func(Config) (Client, error) { panic("no client is built") }, tc.opts...)
			}()
			<-done
			if !strings.Contains(f.msg, tc.want) {
				t.Errorf("Run failed with %q, want %q", f.msg, tc.want)
			}
		})
	}
}

func TestReplayCommand(t *testing.T) {
	t.Run("sub test", func(t *testing.T) {
		got := replayCommand(t, "valkey-9.1 standalone no faults", 7)
		want := "go test -run '^TestReplayCommand$/^sub_test$' (valkey-9.1 standalone no faults, seed 7)"
		if got != want {
			t.Errorf("replayCommand = %q, want %q", got, want)
		}
	})
}

// fatal keeps the first Fatalf and ends the goroutine, as FailNow does.
type fatal struct {
	testing.TB
	msg string
}

func (f *fatal) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
