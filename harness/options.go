package harness

import (
	"io"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/reports"
	"github.com/lockcheck/lockcheck/scenarios/fault"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
	"github.com/lockcheck/lockcheck/topology"
)

// Options are how a run is carried out, as opposed to what it is (the
// Scenario): where its files go and what watches it.
type Options struct {
	// Out is the run's folder: scenario.json, history.json, result.json,
	// report.html, linearizability.html, junit.xml, run.log, the nodes'
	// logs (default runs/<time>-<server>-<topology>-<client>-<seed>).
	Out string
	// Counted says the run is one of a measurement's many, whose figures
	// are counted rather than read: its check draws no linearizability
	// picture, and of the pages only result.json is written (no
	// report.html, linearizability.html or junit.xml), since drawing them
	// would cost each of hundreds of runs for no reader.
	Counted bool
	// StderrDir keeps external adapters' stderr (default: the run's
	// folder): a measurement, whose run folders are scratch, keeps its
	// runs' in one folder.
	StderrDir string
	// Sources say where images come from (a user's binary, a local tag).
	Sources topology.Sources
	// Log gets the start-up lines (image builds, topology start).
	Log io.Writer
	// Progress, when set, gets a live line once a second: elapsed time,
	// operations, faults injected, violations so far.
	Progress io.Writer
	// Configure, when set, adjusts the clients' configuration: a test's
	// hook, never a run setting (those are the Scenario's).
	Configure func(*lockclient.Config)
	// StopOnViolation ends the run, with its check and files, once the
	// live count finds a violation the run's options do not allow (a
	// double holder of an unfenced client, a fence or resource failure):
	// the answer is known, and a CI job stops paying for the rest.
	StopOnViolation bool
	// Replay is the command that runs this scenario again, as the run's
	// files show it (default: lockcheck replay OUT). A library's test,
	// whose client lockcheck's command does not know, gives its own.
	Replay string
}

// Outcome is what a run produced.
type Outcome struct {
	// Out is the run's folder.
	Out string
	// History is the run's history, whole when it has at most
	// checker.GroupOps operations, else its head (meta, faults; no operations: Check.Ops counts them,
	// history.json has them).
	History *history.History
	Check   *checker.Result
	Result  reports.RunResult
	// Schedule is the fault schedule the seed gave.
	Schedule []fault.Event
	// Notes say which faults failed and whether the live check stopped
	// the run.
	Notes []string
	// Interrupted says ctx ended before the run's duration: the results
	// are partial.
	Interrupted bool
	// Stopped says StopOnViolation ended the run early, a violation found.
	Stopped bool
}
