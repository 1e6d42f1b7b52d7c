// Command filecalls measures how a package's files call each other: for every call from a
// function declared in one file to a function or method declared in another file of the same
// package, it counts an edge between the two files, and reports the pairs of files that call
// each other both ways and the calls that run back up a reconcile's steps (stepRank). The
// reconcilers' shape (gather, decide, apply, status) asks for neither. Test files are left out.
//
//	go run ./hack/filecalls ./controllers/...
//
// It prints, for each package, its file edges, its two-way pairs and its upward calls (with
// -edges, every edge), and exits 1 when a package named with -strict has either.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() {
	strict := flag.String("strict", "", "comma-separated package paths that must have no two-way pair and no upward call")
	list := flag.Bool("edges", false, "print every edge, caller's file first")
	flag.Parse()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo}
	pkgs, err := packages.Load(cfg, flag.Args()...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	failed := false
	for _, p := range pkgs {
		edges := fileEdges(p)
		twoWay := pairs(edges)
		up := upward(edges)
		fmt.Printf("%s: %d file edges, %d two-way pairs, %d upward\n", p.PkgPath, len(edges), len(twoWay), len(up))
		for _, e := range up {
			fmt.Printf("  %s calls up into %s\n", e[0], e[1])
		}
		for _, pair := range twoWay {
			fmt.Printf("  %s <-> %s\n", pair[0], pair[1])
		}
		if *list {
			for _, e := range sorted(edges) {
				fmt.Printf("  %s -> %s\n", e[0], e[1])
			}
		}
		if *strict != "" && slices.Contains(strings.Split(*strict, ","), p.PkgPath) && len(twoWay)+len(up) > 0 {
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

// fileEdges are the pairs (caller's file, callee's file) of calls between the package's
// files.
func fileEdges(p *packages.Package) map[[2]string]bool {
	declared := map[types.Object]string{}
	for _, f := range p.Syntax {
		name := filepath.Base(p.Fset.File(f.Pos()).Name())
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				if obj := p.TypesInfo.Defs[fd.Name]; obj != nil {
					declared[obj] = name
				}
			}
		}
	}
	edges := map[[2]string]bool{}
	for _, f := range p.Syntax {
		from := filepath.Base(p.Fset.File(f.Pos()).Name())
		ast.Inspect(f, func(n ast.Node) bool {
			var id *ast.Ident
			switch e := n.(type) {
			case *ast.CallExpr:
				switch fun := e.Fun.(type) {
				case *ast.Ident:
					id = fun
				case *ast.SelectorExpr:
					id = fun.Sel
				}
			default:
				return true
			}
			if id == nil {
				return true
			}
			obj := p.TypesInfo.Uses[id]
			if fn, ok := obj.(*types.Func); ok {
				obj = fn.Origin()
			}
			if to, ok := declared[obj]; ok && to != from {
				edges[[2]string{from, to}] = true
			}
			return true
		})
	}
	return edges
}

// pairs are the pairs of files with edges both ways, each once, sorted.
func pairs(edges map[[2]string]bool) [][2]string {
	var out [][2]string
	for e := range edges {
		if e[0] < e[1] && edges[[2]string{e[1], e[0]}] {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0]+a[1], b[0]+b[1]) })
	return out
}

// sorted are the edges in order.
func sorted(edges map[[2]string]bool) [][2]string {
	out := make([][2]string, 0, len(edges))
	for e := range edges {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0]+" "+a[1], b[0]+" "+b[1]) })
	return out
}

// stepRank orders a reconciler's files by the step of the pass they hold: the helpers every
// step uses (any file not named here) at the bottom, then gather, apply with the events and
// logs it reports through, the status write, the reconcile that runs them, and the watches
// that wire it up. A call from a file to one of a higher rank runs back up the pass.
var stepRank = map[string]int{"gather.go": 1, "apply.go": 2, "events.go": 2, "log.go": 2, "status.go": 3, "controller.go": 4,
	"watches.go": 5, "predicates.go": 5, "overlaps.go": 5}

// upward are the edges from a file to a file of a higher step, sorted.
func upward(edges map[[2]string]bool) [][2]string {
	var out [][2]string
	for _, e := range sorted(edges) {
		if stepRank[e[1]] > stepRank[e[0]] {
			out = append(out, e)
		}
	}
	return out
}
