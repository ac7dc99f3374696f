package graph

import (
	"context"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// nameInputField prefixes the message of an error the schema's validation
// found in an input value (an unknown enum value such as a weekday FUNDAY,
// a wrong type) with the input field it is in, so the client reads which
// field is wrong as with every other BAD_USER_INPUT: "$in.weekdays[1]: ..."
// for a value given in a variable (named by the error's path), and
// "input.weekdays[1]: ..." for one written in the query (found by its
// location in the query text). Any other error is returned as it is.
func nameInputField(ctx context.Context, ge *gqlerror.Error) string {
	if len(ge.Path) >= 2 {
		if v, ok := ge.Path[0].(ast.PathName); ok && v == "variable" {
			return "$" + strings.TrimPrefix(ge.Path[1:].String(), ".") + ": " + ge.Message
		}
	}
	if ge.Rule != "ValuesOfCorrectType" || len(ge.Locations) != 1 || !graphql.HasOperationContext(ctx) {
		return ge.Message
	}
	raw := graphql.GetOperationContext(ctx).RawQuery
	doc, err := parser.ParseQuery(&ast.Source{Input: raw})
	if err != nil {
		return ge.Message
	}
	at := ge.Locations[0]
	var found string
	var value func(path string, v *ast.Value)
	value = func(path string, v *ast.Value) {
		if v == nil || found != "" {
			return
		}
		if v.Position != nil && v.Position.Line == at.Line && v.Position.Column == at.Column && v.Kind != ast.ObjectValue && v.Kind != ast.ListValue {
			found = path
			return
		}
		for i, c := range v.Children {
			if v.Kind == ast.ListValue {
				value(fmt.Sprintf("%s[%d]", path, i), c.Value)
			} else {
				value(path+"."+c.Name, c.Value)
			}
		}
	}
	var selections func(ss ast.SelectionSet)
	selections = func(ss ast.SelectionSet) {
		for _, s := range ss {
			switch s := s.(type) {
			case *ast.Field:
				for _, a := range s.Arguments {
					value(a.Name, a.Value)
				}
				selections(s.SelectionSet)
			case *ast.InlineFragment:
				selections(s.SelectionSet)
			}
		}
	}
	for _, op := range doc.Operations {
		selections(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		selections(f.SelectionSet)
	}
	if found == "" {
		return ge.Message
	}
	return found + ": " + ge.Message
}
