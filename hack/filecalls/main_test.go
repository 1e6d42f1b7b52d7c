package main

import (
	"slices"
	"testing"

	"golang.org/x/tools/go/packages"
)

// The reconcilers keep their shape: no two of their files call each other both ways.
func TestReconcilersHaveNoTwoWayFiles(t *testing.T) {
	cfg := &packages.Config{Dir: "../..", Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo}
	pkgs, err := packages.Load(cfg, "./controllers/clustergroupupgrade", "./controllers/imagebasedgroupupgrade", "./controllers/ztp")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 3 {
		t.Fatalf("loaded %d packages, want 3", len(pkgs))
	}
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			t.Fatalf("%s: %v", p.PkgPath, p.Errors)
		}
		edges := fileEdges(p)
		if len(edges) == 0 {
			t.Errorf("%s: no edge between its files found: the measure does not see the calls", p.PkgPath)
		}
		for _, pair := range pairs(edges) {
			t.Errorf("%s: %s and %s call each other", p.PkgPath, pair[0], pair[1])
		}
		for _, e := range upward(edges) {
			t.Errorf("%s: %s calls up into %s", p.PkgPath, e[0], e[1])
		}
	}
}

func TestUpward(t *testing.T) {
	edges := map[[2]string]bool{{"gather.go", "apply.go"}: true, {"apply.go", "gather.go"}: true, {"scope.go", "status.go"}: true,
		{"controller.go", "status.go"}: true, {"events.go", "recorder.go"}: true, {"gather.go", "events.go"}: true}
	got := upward(edges)
	want := [][2]string{{"gather.go", "apply.go"}, {"gather.go", "events.go"}, {"scope.go", "status.go"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestPairs(t *testing.T) {
	edges := map[[2]string]bool{{"a.go", "b.go"}: true, {"b.go", "a.go"}: true, {"a.go", "c.go"}: true}
	got := pairs(edges)
	if len(got) != 1 || got[0] != [2]string{"a.go", "b.go"} {
		t.Errorf("got %v, want one pair a.go <-> b.go", got)
	}
}
