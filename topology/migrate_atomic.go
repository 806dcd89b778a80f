package topology

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// valkeyAtomic is a CLUSTER MIGRATESLOTS job, followed on its source:
// CLUSTER GETSLOTMIGRATIONS lists the source's jobs by name, and the
// command that starts one answers OK without naming it, so the job is the
// export of the range to the target that was not listed before. The
// target lists its import under the same name, and says success once it
// has claimed the slots: a source that gave its last slots away was seen
// here (valkey 9.1.2, 5 scale-in runs of 120) to list its export as
// snapshotting, failover-paused or failover-granted for the rest of the
// run while it answered CLUSTER CANCELSLOTMIGRATIONS with "No migrations
// ongoing", so a job the source lists as running is also asked about on
// the target.
type valkeyAtomic struct {
	from, to  *Node
	name, rng string
}

func startValkeyAtomic(ctx context.Context, from, to *Node, first, last int) (*valkeyAtomic, error) {
	toID, err := to.ClusterID(ctx)
	if err != nil {
		return nil, err
	}
	before, err := valkeyJobs(ctx, from)
	if err != nil {
		return nil, err
	}
	if _, err := from.Do(ctx, "CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", itoa(first), itoa(last), "NODE", toID); err != nil {
		return nil, err
	}
	v := &valkeyAtomic{from: from, to: to, rng: fmt.Sprintf("%d-%d", first, last)}
	after, err := valkeyJobs(ctx, from)
	if err != nil {
		return nil, err
	}
	for _, r := range after {
		name := jobName(r)
		if strings.EqualFold(r["operation"], "export") && r["slot_ranges"] == v.rng && r["target_node"] == toID &&
			!slices.ContainsFunc(before, func(b map[string]string) bool { return jobName(b) == name }) {
			v.name = name
		}
	}
	if v.name == "" {
		return nil, fmt.Errorf("CLUSTER MIGRATESLOTS answered OK but %s lists no new export of %s: %v", from.Name, v.rng, after)
	}
	return v, nil
}

// jobName is a job's name: "name" on the servers seen, "link_name" in the
// command's first reply schema.
func jobName(r map[string]string) string {
	if n := r["name"]; n != "" {
		return n
	}
	return r["link_name"]
}

func valkeyJobs(ctx context.Context, n *Node) ([]map[string]string, error) {
	msg, err := n.do(ctx, "CLUSTER", "GETSLOTMIGRATIONS")
	if err != nil {
		return nil, err
	}
	rs, err := records(msg)
	if err != nil {
		return nil, fmt.Errorf("CLUSTER GETSLOTMIGRATIONS on %s: %w", n.Name, err)
	}
	return rs, nil
}

func (v *valkeyAtomic) status(ctx context.Context) (MigrationStatus, error) {
	jobs, err := valkeyJobs(ctx, v.from)
	if err != nil {
		return MigrationStatus{}, err
	}
	for _, r := range jobs {
		if jobName(r) != v.name {
			continue
		}
		st := MigrationStatus{State: MigrationRunning, Phase: r["state"], Message: r["message"], Fields: r}
		switch r["state"] {
		case "success":
			st.State = MigrationSucceeded
		case "failed":
			st.State = MigrationFailed
		case "cancelled":
			st.State = MigrationCancelled
		default:
			imp := v.imported(ctx)
			if imp == "success" {
				st.State, st.ByTarget = MigrationSucceeded, true
				st.Message = fmt.Sprintf("%s's import of the job succeeded; %s's export still says %s", v.to.Name, v.from.Name, r["state"])
			} else if st.Message == "" {
				st.Message = fmt.Sprintf("%s's import: %s", v.to.Name, imp)
			}
		}
		return st, nil
	}
	return MigrationStatus{}, fmt.Errorf("%s no longer lists job %s (a restart forgets them)", v.from.Name, v.name)
}

// imported is the state the target gives the job's import ("success"
// once it claimed the slots), or why it gives none.
func (v *valkeyAtomic) imported(ctx context.Context) string {
	jobs, err := valkeyJobs(ctx, v.to)
	if err != nil {
		return "not asked: " + err.Error()
	}
	for _, r := range jobs {
		if jobName(r) == v.name && strings.EqualFold(r["operation"], "import") {
			return r["state"]
		}
	}
	return "not listed"
}

func (v *valkeyAtomic) cancel(ctx context.Context) error {
	st, err := v.status(ctx)
	if err == nil && st.Done() {
		return fmt.Errorf("it has ended: %s", st)
	}
	_, err = v.from.Do(ctx, "CLUSTER", "CANCELSLOTMIGRATIONS")
	return err
}

// redisAtomic is a CLUSTER MIGRATION IMPORT task, followed on its target,
// which names it in its reply.
type redisAtomic struct {
	from, to *Node
	id       string
}

func startRedisAtomic(ctx context.Context, from, to *Node, first, last int) (*redisAtomic, error) {
	fromID, err := from.ClusterID(ctx)
	if err != nil {
		return nil, err
	}
	owner, err := to.slotOwnerID(ctx, first, last)
	if err != nil {
		return nil, err
	}
	// the target imports from whoever owns the slots: say so when that is
	// not the source the caller named
	if owner != fromID {
		return nil, fmt.Errorf("%s says slots %d-%d are owned by %s, not by %s (%s)", to.Name, first, last, owner, from.Name, fromID)
	}
	id, err := to.Do(ctx, "CLUSTER", "MIGRATION", "IMPORT", itoa(first), itoa(last))
	if err != nil {
		return nil, err
	}
	return &redisAtomic{from: from, to: to, id: id}, nil
}

func (r *redisAtomic) status(ctx context.Context) (MigrationStatus, error) {
	msg, err := r.to.do(ctx, "CLUSTER", "MIGRATION", "STATUS", "ID", r.id)
	if err != nil {
		return MigrationStatus{}, err
	}
	tasks, err := records(msg)
	if err != nil {
		return MigrationStatus{}, fmt.Errorf("CLUSTER MIGRATION STATUS on %s: %w", r.to.Name, err)
	}
	for _, f := range tasks {
		if f["id"] != r.id {
			continue
		}
		st := MigrationStatus{State: MigrationRunning, Phase: f["state"], Message: f["last_error"], Fields: f}
		switch f["state"] {
		case "completed", "done":
			st.State = MigrationSucceeded
		case "failed":
			st.State = MigrationFailed
		case "canceled":
			st.State = MigrationCancelled
		}
		return st, nil
	}
	return MigrationStatus{}, fmt.Errorf("%s no longer lists task %s", r.to.Name, r.id)
}

// cancel cancels the task on the target, which drives it, then on the
// source: the documentation says a cancel on one side leaves the other
// retrying.
func (r *redisAtomic) cancel(ctx context.Context) error {
	st, err := r.status(ctx)
	if err == nil && st.Done() {
		return fmt.Errorf("it has ended: %s", st)
	}
	var errs []error
	for _, n := range []*Node{r.to, r.from} {
		if _, err := n.Do(ctx, "CLUSTER", "MIGRATION", "CANCEL", "ID", r.id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// slotOwnerID is the id of the node that owns every slot from first to
// last as n says.
func (n *Node) slotOwnerID(ctx context.Context, first, last int) (string, error) {
	s, err := n.Do(ctx, "CLUSTER", "NODES")
	if err != nil {
		return "", err
	}
	nodes := parseClusterNodes(s)
	addr := ownerIn(nodes, first, last)
	for _, cn := range nodes {
		if cn.addr == addr {
			return cn.id, nil
		}
	}
	return "", fmt.Errorf("%s names no single owner of slots %d-%d: %s", n.Name, first, last, strings.TrimSpace(addr))
}
