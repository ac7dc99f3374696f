package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"coupond/errcode"
)

// noIntrospection refuses operations that ask for __schema or __type before
// they run, with the validation code clients expect, when introspection is off.
type noIntrospection struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = noIntrospection{}

func (noIntrospection) ExtensionName() string                   { return "NoIntrospection" }
func (noIntrospection) Validate(graphql.ExecutableSchema) error { return nil }
func (noIntrospection) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || !asksIntrospection(oc.Operation.SelectionSet, oc.Doc.Fragments, 0) {
		return nil
	}
	return &gqlerror.Error{Message: "introspection is disabled on this server",
		Extensions: map[string]any{"code": errcode.GraphQLValidationFailed}}
}

func asksIntrospection(set ast.SelectionSet, frags ast.FragmentDefinitionList, depth int) bool {
	if depth > 16 {
		return false
	}
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == "__schema" || s.Name == "__type" {
				return true
			}
		case *ast.InlineFragment:
			if asksIntrospection(s.SelectionSet, frags, depth+1) {
				return true
			}
		case *ast.FragmentSpread:
			if f := frags.ForName(s.Name); f != nil && asksIntrospection(f.SelectionSet, frags, depth+1) {
				return true
			}
		}
	}
	return false
}
