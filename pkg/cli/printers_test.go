package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestAgo(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	if got := ago(now.Add(-4*time.Minute), now); got != "4m ago" {
		t.Errorf("ago(4m before) = %q", got)
	}
	if got := ago(now.Add(-4*time.Minute-30*time.Second), now); got != "4m ago" {
		t.Errorf("ago(4m30s before) = %q, a phrase in whole minutes", got)
	}
	if got := ago(now.Add(12*time.Minute), now); got != "in 12m" {
		t.Errorf("ago(12m after) = %q", got)
	}
}

// AGE columns read as kubectl get writes them.
func TestAge(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	const day = 24 * time.Hour
	for since, want := range map[time.Duration]string{
		45 * time.Second: "45s", 5*time.Minute + 30*time.Second: "5m30s", 3*time.Hour + 10*time.Minute: "3h10m",
		2*day + 4*time.Hour: "2d4h", 400 * day: "400d", 3 * 365 * day: "3y",
	} {
		if got := age(now.Add(-since), now); got != want {
			t.Errorf("age(%s before) = %q, want %q", since, got, want)
		}
	}
	if got := age(time.Time{}, now); got != "-" {
		t.Errorf("age(zero) = %q", got)
	}
}

func TestColorEnabled(t *testing.T) {
	cases := map[string]struct {
		mode     string
		terminal bool
		noColor  string
		want     bool
		wantErr  bool
	}{
		"auto on a terminal":               {mode: "auto", terminal: true, want: true},
		"auto on a terminal with NO_COLOR": {mode: "auto", terminal: true, noColor: "1"},
		"auto on a pipe":                   {mode: "auto"},
		"the default is auto":              {mode: "", terminal: true, want: true},
		"always on a pipe":                 {mode: "always", want: true},
		"always wins over NO_COLOR":        {mode: "always", noColor: "1", want: true},
		"never on a terminal":              {mode: "never", terminal: true},
		"an unknown mode is an error":      {mode: "sometimes", wantErr: true},
		"modes are spelt in lower case":    {mode: "Always", wantErr: true},
		"an empty NO_COLOR does not count": {mode: "auto", terminal: true, noColor: "", want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := colorEnabled(tc.mode, tc.terminal, tc.noColor)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("colorEnabled(%q, %v, %q) = %v, %v; want %v, error %v", tc.mode, tc.terminal, tc.noColor, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestStateColouring(t *testing.T) {
	cases := map[string]struct {
		state string
		on    bool
		want  string
	}{
		"Completed in green":          {"Completed", true, "\x1b[32mCompleted\x1b[0m"},
		"NotCompleted in cyan":        {"NotCompleted", true, "\x1b[36mNotCompleted\x1b[0m"},
		"InProgress in cyan":          {"InProgress", true, "\x1b[36mInProgress\x1b[0m"},
		"TimedOut in yellow":          {"TimedOut", true, "\x1b[33mTimedOut\x1b[0m"},
		"CannotStart in yellow":       {"CannotStart", true, "\x1b[33mCannotStart\x1b[0m"},
		"Failed in red":               {"Failed", true, "\x1b[31mFailed\x1b[0m"},
		"Pending stays plain":         {"Pending", true, "Pending"},
		"NotStarted stays plain":      {"NotStarted", true, "NotStarted"},
		"nothing coloured when off":   {"Completed", false, "Completed"},
		"failed stays plain when off": {"Failed", false, "Failed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := (painter{on: tc.on}).state(tc.state); got != tc.want {
				t.Errorf("state(%q) = %q, want %q", tc.state, got, tc.want)
			}
		})
	}
}

func TestTableAlignsColouredCells(t *testing.T) {
	tbl := &table{header: []string{"CLUSTER", "STATE", "SINCE"}}
	tbl.add(plain("spoke-10"), stateCell("InProgress"), plain("4m"))
	tbl.add(plain("a"), stateCell("Completed"), plain(""))
	for _, on := range []bool{false, true} {
		var b bytes.Buffer
		if err := tbl.write(&b, painter{on: on}, "  "); err != nil {
			t.Fatal(err)
		}
		got := stripANSI(b.String())
		want := "  CLUSTER   STATE       SINCE\n  spoke-10  InProgress  4m\n  a         Completed\n"
		if got != want {
			t.Errorf("colour %v: table\n%q\nwant\n%q", on, got, want)
		}
	}
}

func stripANSI(s string) string {
	for _, code := range []string{ansiReset, ansiRed, ansiGreen, ansiYellow, ansiCyan} {
		s = strings.ReplaceAll(s, code, "")
	}
	return s
}

func TestWriteListColumns(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	items := []ranv1alpha1.ClusterGroupUpgrade{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "platform", CreationTimestamp: metav1.NewTime(now.Add(-3*24*time.Hour - 5*time.Hour))},
			Status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateCompleted,
				Progress: ranv1alpha1.Progress{Batch: "5/5", Clusters: "100/100"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "new", CreationTimestamp: metav1.NewTime(now.Add(-5*time.Minute - 30*time.Second))}},
	}
	var b bytes.Buffer
	if err := writeList(&b, painter{}, items, true, now); err != nil {
		t.Fatal(err)
	}
	want := "NAMESPACE  NAME      STATE      BATCH  CLUSTERS  AGE\n" +
		"ztp        platform  Completed  5/5    100/100   3d5h\n" +
		"ztp        new       -          -      -         5m30s\n"
	if b.String() != want {
		t.Errorf("list:\n%s\nwant:\n%s", b.String(), want)
	}
}

// printedCGU is a ClusterGroupUpgrade as status -o prints it.
func printedCGU(namespace, name string) *ranv1alpha1.ClusterGroupUpgrade {
	return printable(&ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted}})
}

// kubectl's -o formats: of an object, of a List of them, and of a document that is no
// object (a plan), for which -o name is refused.
func TestPrintDataKubectlFormats(t *testing.T) {
	dir := t.TempDir()
	writeFile := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cgu := printedCGU("ztp", "upgrade")
	list := listObject([]ranv1alpha1.ClusterGroupUpgrade{*printedCGU("ztp", "a"), *printedCGU("lab", "b")})
	plan := PlanOutput{Batches: []PlanBatch{{Index: 1, Canary: true, Clusters: []PlanCluster{{Name: "sno-1"}}},
		{Index: 2, Clusters: []PlanCluster{{Name: "sno-2"}, {Name: "sno-3"}}}}, SkippedCompliant: []string{}}
	cases := map[string]struct {
		format string
		v      any
		want   string
		err    string
	}{
		"the name of an object":      {format: "name", v: cgu, want: "clustergroupupgrade.ran.openshift.io/upgrade\n"},
		"the names of a List":        {format: "name", v: list, want: "clustergroupupgrade.ran.openshift.io/a\nclustergroupupgrade.ran.openshift.io/b\n"},
		"no name of a plan":          {format: "name", v: plan, err: "-o name writes the kind and name of API objects, and this command prints no API object"},
		"a jsonpath of an object":    {format: "jsonpath={.metadata.namespace}/{.metadata.name} {.status.state}", v: cgu, want: "ztp/upgrade NotCompleted"},
		"no managed fields":          {format: "jsonpath={.metadata.managedFields}", v: cgu, want: ""},
		"a jsonpath of a List":       {format: `jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}`, v: list, want: "a\nb\n"},
		"a jsonpath of a plan":       {format: "jsonpath={.batches[1].clusters[*].name}", v: plan, want: "sno-2 sno-3"},
		"numbers as numbers":         {format: "jsonpath={.batches[*].index}", v: plan, want: "1 2"},
		"a jsonpath file":            {format: "jsonpath-file=" + writeFile("path", "{.kind}"), v: cgu, want: "ClusterGroupUpgrade"},
		"a go-template of an object": {format: "go-template={{.kind}} {{.metadata.name}}", v: cgu, want: "ClusterGroupUpgrade upgrade"},
		"a go-template of a List":    {format: "go-template={{range .items}}{{.metadata.namespace}} {{end}}", v: list, want: "ztp lab "},
		"a go-template of a plan": {format: "go-template={{range .batches}}{{.index}}:{{len .clusters}} {{end}}", v: plan,
			want: "1:1 2:2 "},
		"a go-template file": {format: "go-template-file=" + writeFile("tmpl", "{{.apiVersion}}"), v: cgu, want: "ran.openshift.io/v1alpha1"},
		"a template that fails on the object": {format: "go-template={{index .metadata 3}}", v: cgu,
			err: `error executing template "{{index .metadata 3}}"`},
		"json is the commands' own": {format: "json", v: plan, want: "{\n    \"frozen\": false,\n    \"batches\": ["},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			err := printData(&b, tc.format, tc.v)
			got := b.String()
			if tc.format == outputJSON { // its start
				got = got[:min(len(got), len(tc.want))]
			}
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			case tc.err == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.err == "" && got != tc.want:
				t.Errorf("printed %q, want %q", b.String(), tc.want)
			}
		})
	}
}

// An -o no printer takes, or a template that does not parse, is a usage error, before the
// command reads the hub.
func TestOutputRefusedBeforeTheHub(t *testing.T) {
	cases := map[string]struct {
		args       []string
		wantStderr string
	}{
		"an unknown format": {[]string{"list", "-o", "wide"},
			`Error: Unknown output format "wide": use table, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE or go-template-file=FILE`},
		"a jsonpath that does not parse":    {[]string{"status", "x", "-o", "jsonpath={.status"}, "Error: -o jsonpath: error parsing jsonpath {.status, unclosed action"},
		"a go-template that does not parse": {[]string{"ibgu", "-o", "go-template={{.status"}, "Error: -o go-template: error parsing template {{.status"},
		"a template without a template":     {[]string{"mcu", "x", "-o", "jsonpath"}, "Error: -o jsonpath: template format specified but no template given"},
		"a template file that is absent":    {[]string{"status", "x", "-o", "go-template-file=/nonexistent/t"}, "Error: -o go-template-file: error reading --template /nonexistent/t"},
		"the name of a plan": {[]string{"plan", "x", "-o", "name"},
			"Error: -o name writes the kind and name of API objects, and this command prints a plan: use json, yaml, jsonpath=TEMPLATE or go-template=TEMPLATE"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			o := Options{IOStreams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}}
			args := append(tc.args, "--kubeconfig", "/nonexistent/kubeconfig")
			if got := Run(context.Background(), o, args); got != ExitUsage {
				t.Errorf("exit code %d, want %d; stderr:\n%s", got, ExitUsage, errOut.String())
			}
			if !strings.Contains(errOut.String(), tc.wantStderr) {
				t.Errorf("stderr %q does not contain %q", errOut.String(), tc.wantStderr)
			}
		})
	}
}
