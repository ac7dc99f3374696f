// Package graph is coupond's GraphQL transport: the schema, thin resolvers that
// map input, call one service method and map the result, the error presenter and
// the HTTP handler.
package graph

//go:generate go tool gqlgen generate --config ../gqlgen.yml

import (
	"context"
	"log/slog"

	"coupond/services"
)

// Resolver is the dependency-injection root of the resolvers.
type Resolver struct {
	Svc *services.Services
	Log *slog.Logger
	// JobRunner runs a job for the runJob mutation; cmd points it at the
	// scheduler so manual runs are measured like scheduled ones. Nil runs the
	// job through the services directly.
	JobRunner func(ctx context.Context, job string) (*services.JobRun, error)
}
