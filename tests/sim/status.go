package sim

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// historyLimit is how many compliance messages status-sync keeps per template.
const historyLimit = 10

// TemplateResult is the outcome of evaluating one policy template on a spoke.
type TemplateResult struct {
	// Name is the template's metadata.name.
	Name string
	// Messages are the compliance messages the evaluation emitted, oldest first, as
	// status-sync records them ("Compliant; notification - ...", "NonCompliant; violation -
	// ...", "Pending; ..."). None when nothing changed.
	Messages []string
}

// ReplicatedStatus returns the status the framework's status-sync would write on a
// replicated policy named policyName, given its current status and the messages its
// templates emitted at now: each message becomes a history entry, newest first, at most
// ten per template; a template's compliance is read from its newest message; the policy's
// compliance combines its templates'.
func ReplicatedStatus(current policyv1.PolicyStatus, policyName string, results []TemplateResult, now time.Time) policyv1.PolicyStatus {
	existing := map[string]*policyv1.DetailsPerTemplate{}
	for _, d := range current.Details {
		if d != nil {
			existing[d.TemplateMeta.Name] = d
		}
	}
	out := policyv1.PolicyStatus{}
	states := make([]policyv1.ComplianceState, 0, len(results))
	for _, r := range results {
		d := &policyv1.DetailsPerTemplate{TemplateMeta: metav1.ObjectMeta{Name: r.Name}}
		if old, ok := existing[r.Name]; ok {
			d.History = append([]policyv1.ComplianceHistory(nil), old.History...)
		}
		for i, msg := range r.Messages {
			if i > 0 && msg == r.Messages[i-1] {
				// status-sync drops an event with the same message as the one just before it
				// within 5µs; the messages of one evaluation are that close.
				continue
			}
			at := now.Add(time.Duration(i)) // distinct event names, in emission order
			entry := policyv1.ComplianceHistory{
				LastTimestamp: metav1.NewTime(at).Rfc3339Copy(),
				Message:       msg,
				EventName:     fmt.Sprintf("%s.%x", policyName, at.UnixNano()),
			}
			d.History = append([]policyv1.ComplianceHistory{entry}, d.History...)
		}
		if len(d.History) > historyLimit {
			d.History = d.History[:historyLimit]
		}
		if len(d.History) > 0 {
			d.ComplianceState = configpolicy.TemplateCompliance(d.History[0].Message)
		}
		states = append(states, d.ComplianceState)
		out.Details = append(out.Details, d)
	}
	out.ComplianceState = configpolicy.ReplicatedCompliance(current.ComplianceState, states...)
	return out
}
