package compat

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/topology"
)

// monitor watches a node's MONITOR feed. On a replica it shows the
// commands as they arrive from the primary: what replication really
// carries, which is what a failover promotes.
type monitor struct {
	conn  net.Conn
	lines chan string
}

func startMonitor(ctx context.Context, n *topology.Node) (*monitor, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", n.Addr())
	if err != nil {
		return nil, fmt.Errorf("monitor %s: %w", n.Name, err)
	}
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		conn.Close()
		return nil, fmt.Errorf("monitor %s: %w", n.Name, err)
	}
	r := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	first, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(first, "+OK") {
		conn.Close()
		return nil, fmt.Errorf("monitor %s: %q %v", n.Name, strings.TrimSpace(first), err)
	}
	conn.SetReadDeadline(time.Time{})
	m := &monitor{conn: conn, lines: make(chan string, 1024)}
	go func() {
		defer close(m.lines)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			m.lines <- strings.TrimSpace(strings.TrimPrefix(line, "+"))
		}
	}()
	return m, nil
}

// await returns the first fed command that mentions key and is not one of
// skip, or "" when none came within the wait.
func (m *monitor) await(key string, wait time.Duration, skip ...string) string {
	deadline := time.After(wait)
	for {
		select {
		case line, ok := <-m.lines:
			if !ok {
				return ""
			}
			if !strings.Contains(line, `"`+key+`"`) {
				continue
			}
			cmd := fedCommand(line)
			if !containsFold(skip, strings.Fields(cmd)[0]) {
				return cmd
			}
		case <-deadline:
			return ""
		}
	}
}

func (m *monitor) close() { m.conn.Close() }

// fedCommand strips the timestamp and source from a MONITOR line:
// `1700000000.1 [0 10.0.0.10:6379] "DEL" "k"` becomes `DEL k`.
func fedCommand(line string) string {
	if i := strings.Index(line, "] "); i >= 0 {
		line = line[i+2:]
	}
	return strings.ReplaceAll(line, `"`, "")
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
