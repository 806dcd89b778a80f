package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestBadInputIsOneLineAndExitTwo checks what a user sees for each kind of
// bad input that needs no Docker engine: one line on stderr that says what
// is wrong and how to fix it, and exit code 2.
func TestBadInputIsOneLineAndExitTwo(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "usage"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"run", "--server", "valkey-7"}, "choose one of valkey-8.0"},
		{[]string{"run", "--server", "valkey-9.1", "--topology", "mesh"}, "unknown topology"},
		{[]string{"run", "--server", "valkey-9.1", "--topology", "standalone", "--fault", "kill-primary"}, "does not fit a standalone topology"},
		{[]string{"run", "--server", "valkey-9.1", "--fault", "bogus"}, "unknown fault"},
		{[]string{"run", "--server", "valkey-9.1", "--client", "nosuch"}, "unknown client"},
		{[]string{"run", "--server", "valkey-9.1", "--duration", "-1s"}, "must be positive"},
		{[]string{"run", "--bogus"}, "run lockcheck run -h"},
		{[]string{"probe"}, "--server is required"},
		{[]string{"compat", "--topologies", "mesh"}, "unknown topology"},
		{[]string{"images", "--server-binary", "nopath"}, "want NAME=PATH"},
		{[]string{"check"}, ""},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		code := run(c.args, &stdout, &stderr)
		if code != 2 {
			t.Errorf("lockcheck %s: exit %d, want 2 (stderr %q)", strings.Join(c.args, " "), code, stderr.String())
			continue
		}
		msg := strings.TrimSpace(stderr.String())
		if c.want == "usage" {
			continue
		}
		if strings.Count(msg, "\n") != 0 {
			t.Errorf("lockcheck %s: %d lines on stderr, want one:\n%s", strings.Join(c.args, " "), strings.Count(msg, "\n")+1, msg)
		}
		if !strings.Contains(msg, c.want) {
			t.Errorf("lockcheck %s: stderr %q lacks %q", strings.Join(c.args, " "), msg, c.want)
		}
	}
}
