package services

import (
	"context"
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
		out[i] = ReplicaState{Name: rep.Name, Up: err == nil, ReplicaStatus: st}
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

// maxLag is the largest lag of the replicas: how much older than the
// primary's the data of a read through models.Reading may be. It fails when
// a replica does not answer, since its lag is then unknown.
func (r *ReadReplicas) maxLag(ctx context.Context) (time.Duration, error) {
	var worst float64
	for _, rep := range r.replicas {
		st, err := models.ReplicaStatusOf(rep.DB.WithContext(ctx))
		if err != nil {
			return 0, err
		}
		worst = max(worst, st.LagSeconds)
	}
	return time.Duration(worst * float64(time.Second)), nil
}
