// Package testengine connects a test binary to the Docker engine once,
// for the packages whose tests run real servers on the run path (harness,
// shrink): a test that needs the engine fails, not skips, when it does
// not answer, since a skipped test would count as a passing one.
package testengine

import (
	"context"
	"os"
	"testing"

	"github.com/lockcheck/lockcheck/topology"
)

var (
	engine *topology.Engine
	engErr error
)

// Main is a test binary's TestMain: it connects, runs the tests, removes
// what they left after Ctrl-C, and closes the engine.
func Main(m *testing.M) {
	topology.Defaults()
	engine, engErr = topology.Connect(context.Background(), nil)
	if engErr == nil {
		engine.RemoveOnInterrupt() // for the test binary's life
	}
	code := m.Run()
	if engine != nil {
		engine.Close()
	}
	os.Exit(code)
}

// Get is the engine Main connected; t fails when there is none.
func Get(t *testing.T) *topology.Engine {
	t.Helper()
	if engErr != nil {
		t.Fatalf("these tests need a Docker engine: %v", engErr)
	}
	return engine
}
