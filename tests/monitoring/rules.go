package monitoring

import (
	"errors"
	"fmt"
	"os"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// RuleFile is the part of a monitoring.coreos.com/v1 PrometheusRule that the checks read.
type RuleFile struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace,omitempty"`
		Labels    map[string]string `json:"labels,omitempty"`
	} `json:"metadata"`
	Spec struct {
		Groups []RuleGroup `json:"groups"`
	} `json:"spec"`
}

// RuleGroup is a group of rules.
type RuleGroup struct {
	Name     string `json:"name"`
	Interval string `json:"interval,omitempty"`
	Rules    []Rule `json:"rules"`
}

// Rule is an alerting rule (a recording rule has Record instead of Alert).
type Rule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// severities are the values the severity label of an alert may take.
var severities = map[string]bool{"critical": true, "warning": true, "info": true}

// LoadRules reads a PrometheusRule; a field it does not know is an error, so that a
// misspelt one is not silently ignored.
func LoadRules(path string) (*RuleFile, error) {
	f := &RuleFile{}
	strict := func(data []byte, v any) error { return yaml.UnmarshalStrict(data, v) }
	if err := load(path, f, strict); err != nil {
		return nil, err
	}
	return f, nil
}

// load reads the file at path into v with unmarshal.
func load(path string, v any, unmarshal func([]byte, any) error) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if err := unmarshal(data, v); err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	return nil
}

// CheckRules checks a PrometheusRule holding alerts only: unique alert names, each with a
// positive for, a severity label of critical, warning or info, summary and description
// annotations, and an expression that CheckExpr accepts against e.
func CheckRules(f *RuleFile, e Exported) error {
	var errs []error
	if f.APIVersion != "monitoring.coreos.com/v1" || f.Kind != "PrometheusRule" {
		errs = append(errs, fmt.Errorf("%s %s is not a monitoring.coreos.com/v1 PrometheusRule", f.APIVersion, f.Kind))
	}
	if len(f.Spec.Groups) == 0 {
		errs = append(errs, errors.New("the PrometheusRule has no rule group"))
	}
	seen := map[string]bool{}
	for _, g := range f.Spec.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			errs = append(errs, fmt.Errorf("group %q: a group needs a name and rules", g.Name))
		}
		for i, r := range g.Rules {
			if r.Alert == "" {
				errs = append(errs, fmt.Errorf("group %q, rule %d: not an alert", g.Name, i+1))
				continue
			}
			if seen[r.Alert] {
				errs = append(errs, fmt.Errorf("alert %s: the name is used twice", r.Alert))
			}
			seen[r.Alert] = true
			if err := checkAlert(r, e); err != nil {
				errs = append(errs, fmt.Errorf("alert %s: %w", r.Alert, err))
			}
		}
	}
	return errors.Join(errs...)
}

func checkAlert(r Rule, e Exported) error {
	var errs []error
	if d, err := model.ParseDuration(r.For); err != nil || d <= 0 {
		errs = append(errs, fmt.Errorf("for %q is not a positive duration", r.For))
	}
	if !severities[r.Labels["severity"]] {
		errs = append(errs, fmt.Errorf("severity %q is not critical, warning or info", r.Labels["severity"]))
	}
	for _, a := range []string{"summary", "description"} {
		if r.Annotations[a] == "" {
			errs = append(errs, fmt.Errorf("no %s annotation", a))
		}
	}
	errs = append(errs, CheckExpr(r.Expr, e))
	return errors.Join(errs...)
}
