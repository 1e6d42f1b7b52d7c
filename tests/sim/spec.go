package sim

// SpokeSpec describes a simulated spoke when it joins.
type SpokeSpec struct {
	// Name of the managed cluster.
	Name string
	// Version and Channel the cluster runs.
	Version, Channel string
	// Behaviour of its cluster-version operator.
	Behaviour Behaviour
	// Workers is the number of worker machines: zero for a single-node cluster
	// (SingleReplica), more for a cluster of three control-plane nodes (HighlyAvailable).
	// The machine-config pools follow it (machineConfigPools), and a multi-node cluster has a
	// worker MachineSet of that many machines (machineSets).
	Workers int
	// Machines says how the machine API brings new worker machines up.
	Machines MachineBehaviour

	// ClusterOperators names the cluster's ClusterOperators in the order an update reaches
	// them; nil gives a realistic default set, machine-config last.
	ClusterOperators []string
	// ClusterOperatorConditions are imposed on the cluster operators from the start, for
	// example Degraded=True on one of them (see Simulator.SetClusterOperatorCondition).
	ClusterOperatorConditions []ClusterOperatorCondition
	// Alerts are firing when the spoke joins (see Simulator.SetAlerts).
	Alerts []Alert

	// ManagedUpgrade, when set, runs the managed-upgrade-operator on the spoke with this
	// behaviour; nil: the operator is not installed and UpgradeConfigs do nothing.
	ManagedUpgrade *ManagedUpgradeBehaviour

	// LifecycleAgent, when set, runs the lifecycle agent on the spoke with this behaviour: the
	// ImageBasedUpgrade exists at Idle and moves through the stages its spec asks for; nil:
	// the agent is not installed.
	LifecycleAgent *LifecycleAgentBehaviour

	// Operators are the OLM operators installed when the spoke joins.
	Operators []InstalledOperator
	// Catalog is what the spoke's catalog sources offer besides the channels of Operators, for
	// Subscriptions that policies create.
	Catalog []CatalogChannel
	// OLM says how the spoke's OLM installs bundles.
	OLM OLMBehaviour
}

// extraOperators returns the operators a spoke runs besides the cluster-version operator, in
// the order they step after it: the firing alerts, the cluster operators, OLM and, when
// installed, the managed-upgrade-operator (which reads the health the others report).
func extraOperators(spec SpokeSpec) []Operator {
	firing := &alerts{firing: copyAlerts(spec.Alerts)}
	ops := []Operator{firing, NewClusterOperators(spec), NewOLM(spec), newMachineConfigPools(spec), newMachineSets(spec)}
	if spec.ManagedUpgrade != nil {
		ops = append(ops, newManagedUpgradeOperator(*spec.ManagedUpgrade, firing))
	}
	if spec.LifecycleAgent != nil {
		ops = append(ops, NewLifecycleAgent(*spec.LifecycleAgent))
	}
	return ops
}
