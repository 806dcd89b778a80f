package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
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
		{[]string{"run", "--server", "valkey-9.1", "--duration", "-1s"}, "want a duration above 0"},
		{[]string{"run", "--bogus"}, "run lockcheck run -h"},
		{[]string{"run", "--server", "valkey-9.1", "--stall-rate", "2"}, "between 0 and 1"},
		{[]string{"run", "--server", "valkey-9.1", "--topology", "sentinel", "--wait", "x"}, "is not a count"},
		{[]string{"run", "--server", "valkey-9.1", "--topology", "sentinel", "--wait-aof", "1/1"}, "needs AOF"},
		{[]string{"run", "--server", "valkey-9.1", "--topology", "sentinel", "--wait", "1", "--on-short", "retry"}, "want go-on or release"},
		{[]string{"run", "--server", "valkey-9.1", "--node-build", "n1"}, "want NODE=BUILD"},
		{[]string{"run", "--server", "valkey-9.1", "--node-build", "n1=valkey-7"}, "choose one of valkey-8.0"},
		{[]string{"run", "--server", "valkey-9.1", "--repeat", "0"}, "a number of runs of 1 or more"},
		{[]string{"run", "--server", "valkey-9.1", "--expect", "fenced"}, "choose one of lock-correct, safe, fence-holds"},
		{[]string{"adapter-check"}, "takes one argument"},
		{[]string{"adapter-check", "--topology", "sentinel", "/bin/true"}, "flag provided but not defined: -topology"},
		{[]string{"upgrade", "--server", "valkey-9.1"}, "flag provided but not defined: -server"},
		{[]string{"upgrade", "--from", "valkey-8.1"}, "name both builds"},
		{[]string{"upgrade", "--from", "valkey-8.1", "--to", "valkey-9.1", "--reshard"}, "a sentinel topology has none: choose --topology cluster"},
		{[]string{"run", "--server", "valkey-9.1", "--reshard"}, "flag provided but not defined: -reshard"},
		{[]string{"check", "--tolerance", "soon", "DIR"}, "want a duration"},
		{[]string{"replay"}, "one run folder"},
		{[]string{"replay", "/nonexistent"}, "give a folder lockcheck run or matrix wrote"},
		{[]string{"matrix", "--shard", "4/3"}, "want I/N"},
		{[]string{"merge"}, "the shards' folders"},
		{[]string{"merge", "/nonexistent"}, "is not a matrix folder"},
		{[]string{"probe"}, "--server is required"},
		{[]string{"compat", "--topologies", "mesh"}, "unknown topology"},
		{[]string{"images", "--server-binary", "nopath"}, "want NAME=PATH"},
		{[]string{"check"}, ""},
		{[]string{"catch-rate", "--runs", "0"}, "want a positive number of seeds"},
		{[]string{"catch-rate", "--mutants", "mutant-nosuch"}, "--mutants"},
		{[]string{"catch-rate", "--server", "valkey-7"}, "choose one of valkey-8.0"},
		{[]string{"catch-rate", "extra"}, "unexpected argument"},
		{[]string{"catch-rate", "--shard", "0/4"}, "want I/N"},
		{[]string{"false-alarms", "--shard", "x"}, "want I/N"},
		{[]string{"claims", "--shard", "5/4"}, "want I/N"},
		{[]string{"claims", "--shard", "1/2", "--into", "README.md"}, "--into with --shard"},
		{[]string{"claims", "--parallel", "0"}, "--parallel 0"},
		{[]string{"shrink-figures"}, "wants the violated runs' folders"},
		{[]string{"shrink-figures", "--shard", "3/2", "DIR"}, "want I/N"},
		{[]string{"shrink-figures", "--parallel", "0", "DIR"}, "--parallel 0"},
		{[]string{"shrink-figures", "--budget", "5s", "DIR"}, "want at least a minute"},
		{[]string{"shrink-figures", "--shard", "1/2", "--into", "README.md", "DIR"}, "--into with --shard"},
		{[]string{"shrink-figures", "/nonexistent"}, "give the folder of a violated run"},
		{[]string{"shrink-figures", "/nonexistent", "/nonexistent/"}, "is given twice"},
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

// TestNoEngineIsOneLine hides the Docker engine from a child process (the
// default socket covered in a private mount namespace, DOCKER_HOST at a
// missing socket): a command that needs the engine says so in one line and
// exits 2.
func TestNoEngineIsOneLine(t *testing.T) {
	if os.Getenv("LOCKCHECK_TEST_NO_ENGINE") == "1" {
		os.Exit(run([]string{"probe", "--server", "valkey-9.1"}, os.Stdout, os.Stderr))
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("hiding the engine's socket needs root and unshare")
	}
	hide := `for s in /var/run/docker.sock /run/docker.sock; do [ -S "$s" ] && mount --bind /dev/null "$s"; done; exec "$0" -test.run '^TestNoEngineIsOneLine$'`
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", "sh", "-c", hide, os.Args[0])
	cmd.Env = append(os.Environ(), "LOCKCHECK_TEST_NO_ENGINE=1", "DOCKER_HOST=unix:///nonexistent/docker.sock")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("exit %v, want 2; stderr %q", err, stderr.String())
	}
	msg := strings.TrimSpace(stderr.String())
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "lockcheck: no Docker engine") || !strings.Contains(msg, "start dockerd") {
		t.Fatalf("stderr is not one line saying there is no engine and how to fix it:\n%s", msg)
	}
	t.Log(msg)
}

// TestWrongDockerHostIsOneLine: a DOCKER_HOST that does not answer is
// refused in one line, not replaced by another engine (testcontainers-go
// falls back to the local socket, whose containers the run would then
// look for on the wrong host).
func TestWrongDockerHostIsOneLine(t *testing.T) {
	t.Setenv("DOCKER_HOST", "tcp://127.0.0.1:1")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"probe", "--server", "valkey-9.1"}, &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2; stderr %q", code, stderr.String())
	}
	msg := strings.TrimSpace(stderr.String())
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "DOCKER_HOST") {
		t.Fatalf("stderr is not one line about DOCKER_HOST:\n%s", msg)
	}
}
