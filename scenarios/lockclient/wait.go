package lockclient

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/valkey-io/valkey-go"
)

// WaitPolicy says what a client does when WAIT or WAITAOF after an acquire
// reports fewer acknowledgements than asked for.
type WaitPolicy string

const (
	// WaitGoOn keeps the lock, knowing it may live only on the primary.
	WaitGoOn WaitPolicy = "go-on"
	// WaitRelease gives the lock back and reports the acquire as failed,
	// so that the caller retries.
	WaitRelease WaitPolicy = "release"
)

// WaitOptions narrow the failover window after an acquire. They never close
// it (the article): a checker must still expect double holders under
// failover.
type WaitOptions struct {
	// Replicas is WAIT's numreplicas, or WAITAOF's numreplicas with AOF.
	Replicas int `json:"replicas"`
	// AOF sends WAITAOF Local Replicas Timeout instead of WAIT.
	AOF   bool `json:"aof,omitempty"`
	Local int  `json:"local,omitempty"`
	// Timeout is the command's timeout; it adds to the acquire's deadline
	// (written as text, "100ms").
	Timeout time.Duration `json:"-"`
	OnShort WaitPolicy    `json:"on_short"`
}

// Enabled says whether the options ask for WAIT or WAITAOF at all.
func (w WaitOptions) Enabled() bool { return w.Replicas > 0 || (w.AOF && w.Local > 0) }

func (w WaitOptions) String() string {
	if w.AOF {
		return fmt.Sprintf("WAITAOF %d %d %d", w.Local, w.Replicas, w.Timeout.Milliseconds())
	}
	return fmt.Sprintf("WAIT %d %d", w.Replicas, w.Timeout.Milliseconds())
}

// wait runs WAIT or WAITAOF on c, which must be the connection that sent
// the acquire: both count only that connection's writes. It returns ""
// when enough copies were acknowledged, and otherwise what fell short.
func (w WaitOptions) wait(ctx context.Context, c valkey.CommandClient) string {
	ms := w.Timeout.Milliseconds()
	if w.AOF {
		got, err := c.Do(ctx, c.B().Waitaof().Numlocal(int64(w.Local)).Numreplicas(int64(w.Replicas)).Timeout(ms).Build()).AsIntSlice()
		if err != nil {
			return fmt.Sprintf("%s: %v", w, err)
		}
		if len(got) != 2 || got[0] < int64(w.Local) || got[1] < int64(w.Replicas) {
			return fmt.Sprintf("%s acknowledged %v", w, got)
		}
		return ""
	}
	got, err := c.Do(ctx, c.B().Wait().Numreplicas(int64(w.Replicas)).Timeout(ms).Build()).AsInt64()
	if err != nil {
		return fmt.Sprintf("%s: %v", w, err)
	}
	if got < int64(w.Replicas) {
		return fmt.Sprintf("%s acknowledged by %d replicas", w, got)
	}
	return ""
}

// MarshalJSON writes the timeout as text.
func (w WaitOptions) MarshalJSON() ([]byte, error) {
	type plain WaitOptions
	return json.Marshal(struct {
		plain
		Timeout string `json:"timeout"`
	}{plain(w), w.Timeout.String()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (w *WaitOptions) UnmarshalJSON(b []byte) error {
	type plain WaitOptions
	var v struct {
		plain
		Timeout string `json:"timeout"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*w = WaitOptions(v.plain)
	if v.Timeout != "" {
		d, err := time.ParseDuration(v.Timeout)
		if err != nil {
			return fmt.Errorf("wait timeout: %w", err)
		}
		w.Timeout = d
	}
	return nil
}
