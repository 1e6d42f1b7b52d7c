// Package upgradecheck decides, before a rollout enforces a platform upgrade policy on a
// cluster, whether the upgrade the policy asks for is one the cluster may take, and whether
// the cluster is healthy enough to start it. It answers the questions the
// managed-upgrade-operator asks when it validates an UpgradeConfig and runs its pre-upgrade
// health check, with the conditional-update semantics of the cluster-version operator.
//
// The package is pure: the caller reads the policy, the spoke's ClusterVersion (through a
// ManagedClusterView), its ClusterOperators and alerts, and the update service's graph, and
// passes them in as values. Nothing here reads a clock or does I/O.
//
// # Targets
//
// Targets reads what a policy asks clusters to upgrade to: the object templates of its
// ConfigurationPolicy templates whose complianceType is musthave or mustonlyhave (any case;
// an empty one counts as musthave) and whose object is
//
//   - a config.openshift.io ClusterVersion named "version" (or unnamed): spec.desiredUpdate.version,
//     spec.desiredUpdate.image and spec.channel;
//   - an upgrade.managed.openshift.io UpgradeConfig: spec.desired.version, spec.desired.image and
//     spec.desired.channel.
//
// A field holding a hub or spoke template ("{{") is left empty and the Target is marked
// Templated; a template in place of a whole object on the path (a toLiteral) does the same.
// An object-templates-raw without templates is read like object-templates; one with
// templates gives one Templated Target per kind it mentions. Other policy template kinds and
// mustnothave objects have no targets. JSON that does not decode, or a field of the wrong
// type, is an error naming the policy template index.
//
// # Judge
//
// Judge gives the verdict for one target on one cluster. The rules apply in this order; the
// first that decides gives the Verdict:
//
//  1. No ClusterVersion: Hold, ClusterVersionUnknown.
//  2. A Templated target, or one with neither version nor image: Hold, TargetUnknown.
//  3. The current version is the version of the newest Completed entry of status.history,
//     else status.desired.version; with neither: Hold, ClusterVersionUnknown.
//  4. A target given by image only takes the version that status.history, status.desired,
//     status.availableUpdates, status.conditionalUpdates or the graph list for that image;
//     an image none of them lists: Hold, TargetUnknown.
//  5. The target version equals the current version (as semantic versions when both parse),
//     or the target image is the desired image and the newest history entry is Completed:
//     Done, AlreadyAtTarget.
//  6. The newest history entry is not Completed (an update is under way): to the target,
//     Proceed, UpdateInProgress; to another version, Hold, OtherUpdateInProgress, because
//     the cluster's recommendations are then computed from that other version.
//  7. A current or target version that is not a semantic version: Reject, InvalidVersion.
//  8. A target below the current version: Reject, Downgrade.
//  9. z-stream (same major.minor): listed in status.conditionalUpdates, rule 11 with that
//     entry's Recommended condition and risks; listed in status.availableUpdates, Proceed,
//     InAvailableUpdates; otherwise Reject, NotInAvailableUpdates.
//  10. y-stream (major or minor changes), against the graph of the target's channel (the
//     cluster's spec.channel when the target names none): no graph, Hold, GraphUnavailable;
//     a graph that does not list the current or the target version, a target release whose
//     channels do not include the channel, or no edge from the current version to the
//     target (updategraph.Graph.EdgeBetween), Reject, NotInGraph; the
//     ClusterVersion condition Upgradeable=False, Hold, UpgradeableFalse quoting its message;
//     listed in status.conditionalUpdates, rule 11 with that entry; a conditional edge, rule
//     11 with the condition updategraph.Recommend gives without a PromQL matcher (PromQL
//     risks are Unknown); otherwise Proceed, InGraph.
//  11. A conditional target: Recommended=True, Proceed, Recommended. Otherwise, when
//     AllowNotRecommended is set or every risk name is in AcceptRisks (a conditional
//     update listing no risk is never accepted by name), Proceed, RisksAccepted with
//     Accepted naming all its risks; otherwise Hold, NotRecommended when
//     Recommended=False and RiskUnknown when it is Unknown or missing (fail closed). The
//     Verdict lists every risk of a conditional target in Risks and names them in Message.
//
// Messages are one sentence, capitalised, without a trailing period; they name the versions
// and risks, quote at most 200 characters of any message they carry and name at most five
// items of any list, then "and N more".
//
// # Health
//
// Health is the pre-upgrade health check: a cluster is unhealthy when a ClusterOperator is
// Degraded=True or Available=False, when an alert of severity critical is firing, or, for a
// y-stream upgrade, when the ClusterVersion is Upgradeable=False. Inputs that were not read
// are nil (an empty, non-nil slice means read and empty): nil ClusterOperators, nil Alerts,
// or a nil Cluster for a y-stream make the verdict unhealthy with reason HealthUnknown (fail
// closed). Messages name at most five operators or alerts, then "and N more"; Problems lists
// them all.
package upgradecheck
