package graph

import (
	"context"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"coupond/errcode"
)

// operationLimits refuses, before anything runs, operations that are deeper,
// wider or more aliased than any client of coupond needs (OWASP GraphQL cheat
// sheet), and mutation operations with more than one root field, so that one
// request can never carry a batch of redemptions.
type operationLimits struct {
	maxDepth   int
	maxAliases int
	maxFields  int
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = operationLimits{}

func (operationLimits) ExtensionName() string                   { return "OperationLimits" }
func (operationLimits) Validate(graphql.ExecutableSchema) error { return nil }

func (l operationLimits) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	op := oc.Operation
	if op == nil {
		return nil
	}
	if op.Operation == ast.Mutation {
		roots := 0
		for _, sel := range op.SelectionSet {
			if f, ok := sel.(*ast.Field); !ok || f.Name != "__typename" {
				roots++
			}
		}
		if roots > 1 {
			return limitError("a mutation operation may contain only one mutation field; send one request per change")
		}
	}
	w := walker{frags: oc.Doc.Fragments, seen: map[string]bool{}}
	w.walk(op.SelectionSet, 1)
	switch {
	case w.depth > l.maxDepth:
		return limitError(fmt.Sprintf("the query is nested %d levels deep; the limit is %d", w.depth, l.maxDepth))
	case w.aliases > l.maxAliases:
		return limitError(fmt.Sprintf("the query uses %d aliases; the limit is %d", w.aliases, l.maxAliases))
	case w.fields > l.maxFields:
		return limitError(fmt.Sprintf("the query selects %d fields; the limit is %d", w.fields, l.maxFields))
	}
	return nil
}

func limitError(msg string) *gqlerror.Error {
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": errcode.QueryTooComplex}}
}

// walker measures a selection set, following fragments once each, so a cycle
// of fragments (which validation also refuses) cannot loop it.
type walker struct {
	frags                  ast.FragmentDefinitionList
	seen                   map[string]bool
	depth, aliases, fields int
}

func (w *walker) walk(set ast.SelectionSet, depth int) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if strings.HasPrefix(s.Name, "__") && len(s.SelectionSet) > 0 {
				// Introspection (__schema, __type) is deep by nature and is
				// allowed only when the server enables it; it is not measured.
				continue
			}
			w.fields++
			if s.Alias != "" && s.Alias != s.Name {
				w.aliases++
			}
			if len(s.SelectionSet) > 0 {
				w.depth = max(w.depth, depth)
				w.walk(s.SelectionSet, depth+1)
			} else {
				w.depth = max(w.depth, depth-1)
			}
		case *ast.InlineFragment:
			w.walk(s.SelectionSet, depth)
		case *ast.FragmentSpread:
			if w.seen[s.Name] {
				continue
			}
			w.seen[s.Name] = true
			if f := w.frags.ForName(s.Name); f != nil {
				w.walk(f.SelectionSet, depth)
			}
		}
	}
}
