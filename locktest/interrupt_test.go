package locktest

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childEnv makes this test binary the interrupted process of
// TestInterruptRemovesTopologies.
const childEnv = "LOCKTEST_INTERRUPT_CHILD"

// TestInterruptRemovesTopologies runs a library test (this binary, as a
// child) that started a topology, sends it SIGINT as Ctrl-C does, and
// asserts that it ended of the interrupt and left no container or network
// of that topology. Without the Env's watch the child dies at once and
// its containers stay up (make clean would be left to remove them).
func TestInterruptRemovesTopologies(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		interruptedChild(t)
		return
	}
	e := New(t)
	if e.missing != "" {
		unavailable(t, e.missing)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestInterruptRemovesTopologies$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var run string
	var lines []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if id, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "run id: "); ok {
			run = id
			break
		}
	}
	if run == "" {
		cmd.Wait()
		t.Fatalf("the child printed no run id:\n%s", strings.Join(lines, "\n"))
	}
	if n := managed(t, "container", run); n == 0 {
		t.Fatalf("run %s has no container before the interrupt", run)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	err = cmd.Wait()
	st, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !(st.Signaled() && st.Signal() == syscall.SIGINT || st.ExitStatus() == 130) {
		t.Errorf("the child ended with %v, want the interrupt (SIGINT or code 130)", err)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "interrupt: removing the containers and networks") {
		t.Errorf("the child did not say it removed what it started:\n%s", strings.Join(lines, "\n"))
	}
	if n := managed(t, "container", run); n != 0 {
		t.Errorf("%d containers of run %s survived the interrupt", n, run)
	}
	if n := managed(t, "network", run); n != 0 {
		t.Errorf("%d networks of run %s survived the interrupt", n, run)
	}
}

// interruptedChild starts a standalone topology, says its run id and
// waits to be interrupted.
func interruptedChild(t *testing.T) {
	e := New(t)
	topo, release := e.topology(t, Scenario{ServerSettings: ServerSettings{Server: "valkey-9.1", Topology: "standalone"}})
	defer release()
	os.Stdout.WriteString("run id: " + topo.RunID + "\n")
	time.Sleep(2 * time.Minute)
	t.Fatal("not interrupted within 2 minutes")
}

// managed counts the objects of run, containers ("container") or
// networks ("network"), that the engine still has.
func managed(t *testing.T, what, run string) int {
	t.Helper()
	args := []string{what, "ls", "-q", "--filter", "label=lockcheck.run=" + run}
	if what == "container" {
		args = append(args, "-a") // stopped ones too
	}
	out, err := exec.Command("docker", args...).Output()
	if err != nil {
		t.Fatalf("docker %s: %v", strings.Join(args, " "), err)
	}
	return len(strings.Fields(string(out)))
}
