package services

import (
	"context"
	"fmt"
	"time"

	"coupond/models"
)

// ReadReplicas reports on the read replicas that serve lists, statements,
// exports, the overview and reconciliation's reads (Options.ReadReplicas).
type ReadReplicas struct {
	replicas []models.ReadReplica
}

// ReplicaState is one read replica's replication as it reports it.
type ReplicaState struct {
	// Name is the replica's host:port/database.
	Name string
	// Up is false when the replica did not answer; Error says why.
	Up    bool
	Error *string
	// Serving is whether reads go to it (see CheckHealth).
	Serving bool
	models.ReplicaStatus
}

// Configured reports whether there are read replicas at all.
func (r *ReadReplicas) Configured() bool { return len(r.replicas) > 0 }

// States asks every replica for its replication status, for metrics and the
// console. A replica that does not answer within two seconds is not Up.
func (r *ReadReplicas) States(ctx context.Context) []ReplicaState {
	out := make([]ReplicaState, len(r.replicas))
	for i, rep := range r.replicas {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := models.ReplicaStatusOf(rep.DB.WithContext(cctx))
		cancel()
		out[i] = ReplicaState{Name: rep.Name, Up: err == nil, Serving: rep.Serving(), ReplicaStatus: st}
		if err != nil {
			msg := err.Error()
			out[i].Error = &msg
		}
	}
	return out
}

// Status is States for the console: administrators and finance staff.
func (r *ReadReplicas) Status(ctx context.Context, actor Actor) ([]ReplicaState, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return nil, err
	}
	return r.States(ctx), nil
}

// CheckHealth asks every replica for its status and lets the reads marked by
// models.Reading go only to the healthy ones: those that answer within two
// seconds, are in recovery (a replica, not a primary of their own) and lag
// by at most maxLag. With none healthy those reads go to the primary, so a
// replica that dies or falls behind costs the primary some reads, never a
// failed or a too-stale page. It returns the states after the check, and
// calls changed for each replica that started or stopped serving.
func (r *ReadReplicas) CheckHealth(ctx context.Context, maxLag time.Duration, changed func(ReplicaState, string)) []ReplicaState {
	states := r.States(ctx)
	for i, st := range states {
		ok, why := healthy(st, maxLag)
		if ok != r.replicas[i].Serving() {
			r.replicas[i].SetServing(ok)
			states[i].Serving = ok
			if changed != nil {
				changed(states[i], why)
			}
		}
	}
	return states
}

// healthy judges one replica's state, saying why it is not.
func healthy(st ReplicaState, maxLag time.Duration) (bool, string) {
	switch {
	case !st.Up:
		return false, "it does not answer"
	case !st.InRecovery:
		return false, "it is not in recovery: a primary of its own"
	case st.LagSeconds > maxLag.Seconds():
		return false, fmt.Sprintf("it lags by %.1f s, more than %s", st.LagSeconds, maxLag)
	}
	return true, "healthy"
}

// WatchHealth runs CheckHealth every interval until ctx ends.
func (r *ReadReplicas) WatchHealth(ctx context.Context, every, maxLag time.Duration, changed func(ReplicaState, string)) {
	if !r.Configured() {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.CheckHealth(ctx, maxLag, changed)
		}
	}
}

// maxLag is the largest lag of the serving replicas: how much older than the
// primary's the data of a read through models.Reading may be (0 when none
// serves, and the reads go to the primary). A serving replica that does not
// answer is taken out of the reads at once.
func (r *ReadReplicas) maxLag(ctx context.Context) (time.Duration, error) {
	var worst float64
	for _, rep := range r.replicas {
		if !rep.Serving() {
			continue
		}
		st, err := models.ReplicaStatusOf(rep.DB.WithContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				return 0, err
			}
			rep.SetServing(false)
			continue
		}
		worst = max(worst, st.LagSeconds)
	}
	return time.Duration(worst * float64(time.Second)), nil
}
