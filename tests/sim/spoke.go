package sim

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

var clusterVersionGVK = configv1.GroupVersion.WithKind("ClusterVersion")

// Spoke is one simulated managed cluster: its objects in memory and the state of the
// simulated controllers running on it.
type Spoke struct {
	mu        sync.Mutex
	name      string
	objects   *countingStore
	reachable bool
	// silent is true while the cluster's work-manager add-on answers no view and no action,
	// the cluster staying Available (Silence).
	silent bool
	cvo    *CVO
	// operators run each round, the cluster-version operator first.
	operators []Operator
	// evaluations holds the last evaluation of each ConfigurationPolicy, by replicated
	// policy and template name, to tell which compliance messages a new one emits.
	evaluations map[string]evaluation
	// writesSeen is the store's write count when the last round began.
	writesSeen int
	// claimed is the version the cluster's version claim last reported (the klusterlet's
	// version.openshift.io); the spoke joins with its version claimed.
	claimed string
}

type evaluation struct {
	result     configpolicy.Result
	generation int64
}

func newSpoke(spec SpokeSpec, updates UpdateSource, now time.Time) (*Spoke, error) {
	store := &countingStore{Store: configpolicy.NewMapStore(newMapper())}
	cv, err := toUnstructured(NewClusterVersion(spec.Version, spec.Channel, now))
	if err != nil {
		return nil, err
	}
	if err := store.Create(cv); err != nil {
		return nil, fmt.Errorf("ClusterVersion of %s: %w", spec.Name, err)
	}
	cvo := &CVO{Cluster: spec.Name, Behaviour: spec.Behaviour, Updates: updates}
	return &Spoke{
		name: spec.Name, objects: store, reachable: true, cvo: cvo, claimed: spec.Version,
		operators:   append([]Operator{cvo}, extraOperators(spec)...),
		evaluations: map[string]evaluation{},
	}, nil
}

// Operator is a controller simulated on a spoke: each round it may read and change the
// spoke's objects, and it says when it wants to run again (zero: when something changes).
type Operator interface {
	Step(objects configpolicy.Store, now time.Time) (time.Duration, error)
}

// operatorPasses bounds how often the operators run in one round while they keep reacting
// to each other's writes (the managed-upgrade operator writes the ClusterVersion, the
// cluster-version operator then starts the update).
const operatorPasses = 5

// stepOperators runs the simulated operators until a pass writes nothing (at most
// operatorPasses passes) and returns the soonest time one of them wants to run again.
func (sp *Spoke) stepOperators(now time.Time) (time.Duration, error) {
	var next time.Duration
	for range operatorPasses {
		sp.changedSince()
		next = 0
		for _, op := range sp.operators {
			again, err := op.Step(sp.objects, now)
			if err != nil {
				return 0, err
			}
			next = soonest(next, again)
		}
		if !sp.changedSince() {
			break
		}
	}
	return next, nil
}

// changedSince reports whether anything wrote to the spoke's objects since the last call.
func (sp *Spoke) changedSince() bool {
	changed := sp.objects.writes != sp.writesSeen
	sp.writesSeen = sp.objects.writes
	return changed
}

// evaluated is the outcome of evaluating one replicated policy: the status status-sync would
// write, and the evaluations to remember once that status is written.
type evaluated struct {
	status      policyv1.PolicyStatus
	evaluations map[string]evaluation
}

// evaluate evaluates the ConfigurationPolicy templates of a replicated policy, enforcing
// what they enforce. The evaluations are not remembered until commit: a status that failed
// to reach the hub must emit its messages again, as the real spoke keeps its events until
// status-sync has recorded them.
//
// claimed maps each ConfigurationPolicy name already taken in the cluster namespace to the
// replicated policy that took it: template-sync refuses a second template of the same name
// and reports a template error on the policy that came later.
func (sp *Spoke) evaluate(p *policyv1.Policy, prepared *preparedCache, claimed map[string]string, now time.Time) evaluated {
	out := evaluated{evaluations: map[string]evaluation{}}
	results := make([]TemplateResult, 0, len(p.Spec.PolicyTemplates))
	for i, t := range p.Spec.PolicyTemplates {
		tmpl := prepared.get(t.ObjectDefinition.Raw, p.Spec.RemediationAction)
		if tmpl.err != nil {
			results = append(results, TemplateResult{Name: fmt.Sprintf("template-%d", i), Messages: []string{configpolicy.TemplateErrorMessage(tmpl.err.Error())}})
			continue
		}
		if owner, taken := claimed[tmpl.name]; taken && owner != p.Name {
			results = append(results, TemplateResult{Name: tmpl.name, Messages: []string{configpolicy.TemplateErrorMessage(fmt.Sprintf(
				"Template name must be unique. Policy template with kind: ConfigurationPolicy name: %s already exists in policy %s", tmpl.name, owner))}})
			continue
		}
		claimed[tmpl.name] = p.Name
		results = append(results, sp.evaluateTemplate(p, tmpl, now, out.evaluations))
	}
	out.status = ReplicatedStatus(p.Status, p.Name, results, now)
	return out
}

// commit remembers the evaluations of a policy whose status reached the hub.
func (sp *Spoke) commit(e evaluated) {
	for key, ev := range e.evaluations {
		sp.evaluations[key] = ev
	}
}

func (sp *Spoke) evaluateTemplate(p *policyv1.Policy, tmpl *template, now time.Time, into map[string]evaluation) TemplateResult {
	key := p.Name + "/" + tmpl.name
	previous := sp.evaluations[key]
	result := tmpl.prepared.Evaluate(sp.objects, now)
	messages := configpolicy.EmittedMessages(previous.result, result, previous.generation != p.Generation)
	into[key] = evaluation{result: result, generation: p.Generation}
	return TemplateResult{Name: tmpl.name, Messages: messages}
}

// template is a policy template decoded as template-sync delivers it to the spoke, and
// prepared for evaluation; err says why it cannot be simulated.
type template struct {
	name     string
	prepared *configpolicy.Prepared
	err      error
}

// decodePolicyTemplate decodes a ConfigurationPolicy template; the parent policy's
// remediationAction, when set, replaces the template's, as template-sync does.
func decodePolicyTemplate(raw []byte, parentAction policyv1.RemediationAction) *template {
	cp := &configpolicyv1.ConfigurationPolicy{}
	if err := json.Unmarshal(raw, cp); err != nil {
		return &template{err: fmt.Errorf("decoding a policy template: %w", err)}
	}
	if cp.Kind != "ConfigurationPolicy" {
		return &template{err: fmt.Errorf("%s templates are not simulated", cp.Kind)}
	}
	if parentAction != "" {
		cp.Spec.RemediationAction = configpolicyv1.RemediationAction(parentAction)
	}
	return &template{name: cp.Name, prepared: configpolicy.Prepare(cp)}
}

// runningVersion is the version of the last update the ClusterVersion's history shows
// completed, "" when none did.
func (sp *Spoke) runningVersion() string {
	cv, err := sp.clusterVersion()
	if err != nil {
		return ""
	}
	return completedVersion(cv)
}

func (sp *Spoke) clusterVersion() (*configv1.ClusterVersion, error) {
	return getClusterVersion(sp.objects)
}

func getClusterVersion(objects configpolicy.Store) (*configv1.ClusterVersion, error) {
	obj, err := objects.Get(clusterVersionGVK, "", "version")
	if err != nil {
		return nil, err
	}
	cv := &configv1.ClusterVersion{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, cv); err != nil {
		return nil, err
	}
	cv.ResourceVersion = obj.GetResourceVersion()
	return cv, nil
}

// preparedCache shares decoded and prepared templates between spokes and rounds: the same
// replicated template reaches every cluster, and decoding it once is enough.
type preparedCache struct{ m sync.Map }

func (c *preparedCache) get(raw []byte, parentAction policyv1.RemediationAction) *template {
	key := string(parentAction) + "\x00" + string(raw)
	if t, ok := c.m.Load(key); ok {
		return t.(*template)
	}
	t, _ := c.m.LoadOrStore(key, decodePolicyTemplate(raw, parentAction))
	return t.(*template)
}

// countingStore counts the writes to a store, so that a round can tell whether enforcement
// changed the spoke.
type countingStore struct {
	configpolicy.Store
	writes int
}

func (s *countingStore) Create(obj *unstructured.Unstructured) error {
	s.writes++
	return s.Store.Create(obj)
}

func (s *countingStore) Update(obj *unstructured.Unstructured) error {
	s.writes++
	return s.Store.Update(obj)
}

func (s *countingStore) Delete(gvk schema.GroupVersionKind, namespace, name string) error {
	s.writes++
	return s.Store.Delete(gvk, namespace, name)
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := toMap(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func equalJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
