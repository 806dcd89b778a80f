package topology

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"
	tc "github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// Labels carried by everything lockcheck starts, so that a run, a test or
// `make clean` can find what it owns.
const (
	LabelManaged = "lockcheck.managed"
	LabelRun     = "lockcheck.run"
	LabelNode    = "lockcheck.node"
	// LabelImage marks images lockcheck built, with the build's name.
	LabelImage = "lockcheck.image"
	// LabelPackage records the Debian package version an image was built from.
	LabelPackage = "lockcheck.package"
)

// Engine is the Docker engine lockcheck talks to.
type Engine struct {
	cli *tc.DockerClient
	log *slog.Logger

	mu      sync.Mutex
	started []string
	bases   debianBases
}

// Defaults sets the environment testcontainers-go needs on a machine
// without Ryuk's image: lockcheck removes what it starts itself, and the
// wait for a mapped port must dial loopback when the engine is local. A
// value the user set wins.
func Defaults() {
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	host := os.Getenv("DOCKER_HOST")
	if os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" && (host == "" || strings.HasPrefix(host, "unix://")) {
		os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
	}
	// testcontainers-go logs every connection to the default logger; the
	// harness reports progress through its own logger instead.
	tclog.SetDefault(tclog.Logger(quiet{}))
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// Connect reaches the Docker engine or says how to start one.
func Connect(ctx context.Context, log *slog.Logger) (*Engine, error) {
	Defaults()
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cli, err := tc.NewDockerClientWithOpts(ctx)
	if err != nil {
		// testcontainers-go joins one error per place it looked.
		return nil, fmt.Errorf("no Docker engine (%s): start dockerd or set DOCKER_HOST", oneLine(err))
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{}); err != nil {
		return nil, fmt.Errorf("no Docker engine answers (%s): start dockerd or set DOCKER_HOST", oneLine(err))
	}
	// testcontainers-go falls back to the local socket when DOCKER_HOST
	// does not answer; the containers would then start on another engine
	// than the one asked for, and their ports be looked for on the wrong
	// host.
	if want := os.Getenv("DOCKER_HOST"); want != "" && cli.DaemonHost() != want {
		cli.Close()
		return nil, fmt.Errorf("DOCKER_HOST=%s does not answer (testcontainers-go fell back to %s): start that engine, fix DOCKER_HOST or unset it", want, cli.DaemonHost())
	}
	return &Engine{cli: cli, log: log}, nil
}

// Client is the engine's Docker client, for the few calls testcontainers-go
// does not wrap (kill with a signal, image import).
func (e *Engine) Client() *tc.DockerClient { return e.cli }

// Close removes the Debian base trees builds shared and closes the
// connection to the engine.
func (e *Engine) Close() error {
	e.bases.remove()
	return e.cli.Close()
}

// oneLine joins a multi-line error's lines with "; ".
func oneLine(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "; ")
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// track remembers a run this engine started, for RemoveStarted.
func (e *Engine) track(runID string) {
	e.mu.Lock()
	e.started = append(e.started, runID)
	e.mu.Unlock()
}

// RemoveStarted removes whatever is left of every run started through this
// engine, and nothing that other processes started: a test suite's last
// cleanup, after a failed spec skipped its own.
func (e *Engine) RemoveStarted(ctx context.Context) error {
	e.mu.Lock()
	runs := append([]string(nil), e.started...)
	e.mu.Unlock()
	var errs []error
	for _, id := range runs {
		errs = append(errs, e.RemoveRun(ctx, id))
	}
	return errors.Join(errs...)
}
