package compat

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/topology"
)

// Cases lists every case in the order it runs.
func Cases() []Case {
	var all []Case
	all = append(all, lockCases()...)
	all = append(all, optionCases()...)
	all = append(all, fenceCases()...)
	all = append(all, replicationCases()...)
	all = append(all, scriptCases()...)
	all = append(all, failoverCases()...)
	all = append(all, migrateCases()...)
	all = append(all, atomicMigrateCases()...)
	all = append(all, lastCases()...)
	return all
}

// Options are the topology options compat runs with: the module command
// is enabled so that a build with Lua as a module can run without it.
func Options() topology.Options {
	return topology.Options{ServerConfig: []string{"enable-module-command yes"}}
}

// Observe runs every case that applies to a running topology and judges
// each reply. progress gets a line per case.
func Observe(ctx context.Context, t *topology.Topology, progress io.Writer) ([]Cell, error) {
	opt := t.ClientOption()
	opt.ConnWriteTimeout = 3 * time.Second
	c, err := valkey.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("connect to %s %s: %w", t.Build.Name, t.Kind, err)
	}
	defer c.Close()
	e := &env{t: t, c: c, f: Expected(t.Build.Name), prefix: "cc-"}
	var cells []Cell
	for _, cs := range Cases() {
		if !cs.Applies(t.Kind) {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		v := cs.run(cctx, e)
		cancel()
		if ctx.Err() != nil {
			return cells, ctx.Err()
		}
		cell := Cell{Server: t.Build.Name, Version: t.Version, Topology: string(t.Kind), Case: cs.Name, Outcome: v.outcome, Observed: oneLine(v.observed), Expected: v.expected}
		cells = append(cells, cell)
		if progress != nil {
			fmt.Fprintf(progress, "  %-36s %-11s %s\n", cs.Name, cell.Outcome, cell.Observed)
		}
	}
	return cells, nil
}

// failoverCases: on Sentinel, a clean failover, then the core lock
// commands again on the new primary, and the script cache there.
func failoverCases() []Case {
	return []Case{{Name: "sentinel/after-failover", Kinds: []topology.Kind{topology.Sentinel}, run: func(ctx context.Context, e *env) verdict {
		k := e.key("afterfo")
		old, err := e.t.Primary(ctx, k)
		if err != nil {
			return verdict{Fail, err.Error(), ""}
		}
		sha, _ := old.Do(ctx, "SCRIPT", "LOAD", compareAndDelete)
		if got := nodeDo(ctx, e.t.Sentinels()[0], "SENTINEL", "FAILOVER", topology.MasterSet); got != "OK" {
			return verdict{Fail, "SENTINEL FAILOVER: " + got, "OK"}
		}
		var promoted *topology.Node
		for promoted == nil || promoted == old {
			if ctx.Err() != nil {
				return verdict{Fail, "no new primary within the check's deadline", "a replica promoted"}
			}
			time.Sleep(100 * time.Millisecond)
			promoted, _ = e.t.Primary(ctx, k)
		}
		// The client follows Sentinel's switch; wait until it writes.
		var acq string
		for {
			acq = e.do(ctx, "SET", k, "t", "NX", "PX", "30000")
			if acq == "OK" || ctx.Err() != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		ext := e.do(ctx, "SET", k, "t", "IFEQ", "t", "PX", "30000")
		rel := e.do(ctx, "DELIFEQ", k, "t")
		script := nodeDo(ctx, promoted, "EVALSHA", sha, "1", k, "t")
		obs := fmt.Sprintf("%s -> %s; acquire %s; extend %s; release %s; EVALSHA of a script loaded before: %s", old.Name, promoted.Name, acq, ext, rel, firstWord(script))
		want := fmt.Sprintf("acquire OK; extend %s; release %s; EVALSHA NOSCRIPT", expectReply(e.f[IFEQ], "OK"), expectReply(e.f[DELIFEQ], "1"))
		return always(obs, want, func(string) bool {
			return acq == "OK" && sameAs(e.f[IFEQ], ext, "OK") && sameAs(e.f[DELIFEQ], rel, "1") && strings.HasPrefix(script, "NOSCRIPT")
		})
	}}}
}

func expectReply(has bool, want string) string {
	if has {
		return want
	}
	return "refused"
}

func sameAs(has bool, got, want string) bool {
	if has {
		return got == want
	}
	return isRefusal(got)
}

func firstWord(s string) string {
	if i := strings.IndexByte(s, ' '); i > 0 {
		return s[:i]
	}
	return s
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	return strings.ReplaceAll(s, "\n", " ")
}
