// Package configpolicy evaluates ConfigurationPolicy objects against an in-memory object store the
// way the config-policy-controller does on a managed cluster, so that a simulated spoke reports the
// same compliance, with the same messages, as a real one.
//
// The package is pure: it reads and writes only the Store it is given, takes the time as an
// argument, and keeps no state between evaluations. Prepare a policy once and evaluate the prepared
// form on every spoke: preparation parses the object templates, evaluation only reads them.
//
// # Facts taken from the real controllers
//
// Read from open-cluster-management.io/config-policy-controller v0.19.0 and
// open-cluster-management.io/governance-policy-framework-addon v0.19.0; the code here is written
// anew from these facts.
//
// controllers/configurationpolicy_controller.go, determineDesiredObjects:
//   - A namespaced kind without metadata.namespace is evaluated in every namespace chosen by
//     spec.namespaceSelector; none chosen gives the violation "namespaced object[ <name>] of kind
//     <Kind> has no namespace specified from the policy namespaceSelector nor the object metadata"
//     (reason "K8s missing namespace").
//   - An unnamed template with an objectSelector becomes one named object per selected object;
//     none selected is compliant: "No objects of kind <Kind> were matched from the policy
//     objectSelector". For mustnothave the selected objects are further narrowed to those whose
//     content matches; none left is compliant: "<resource> missing as expected in namespace <ns>"
//     ("in namespaces: a, b" for several).
//   - A missing kind or apiVersion gives "The kind and apiVersion fields are required on the
//     object template at index <i> in policy <name>"; an unknown kind gives "couldn't find mapping
//     resource with kind <Kind> in API version <group/version>, please check if you have CRD
//     deployed" (getMapping).
//
// controllers/configurationpolicy_controller.go, handleObjects and handleSingleObj:
//   - Named objects are fetched by name. Unnamed objects are listed and the names whose content
//     matches the template are kept (buildNameList, comparing with zero values equal to absent
//     fields); enforce is downgraded to inform for them. One match is then compared like a named
//     object; none is "not found" (or "found but not as specified" when objects of the kind
//     exist); several are "found as specified" (mustnothave: "found").
//   - mustnothave on a named object checks existence only; the content is not compared.
//   - A missing musthave object yields the event "not found" and, on enforce, a second event
//     "<resource> [<name>] was created successfully". When the template states status, the
//     creation is still NonCompliant: "<resource> [<name>] was created successfully, the status
//     of the object will be verified in the next evaluation" (reason "K8s creation success, status
//     unchecked").
//   - A present object whose spec needs a change yields "found but not as specified" and, on
//     enforce, "was updated successfully". A status mismatch is a violation that enforcement
//     cannot fix: the update is sent, the API server keeps the status.
//
// controllers/configurationpolicy_controller.go, checkAndUpdateResource, handleKeys,
// handleSingleKey, mergeSpecs, mergeArrays; controllers/configurationpolicy_utils.go,
// deeplyEquivalent, checkFieldsAreEquivalent, checkListsAreEquivalent, sortAndSprint,
// formatMetadata, fmtMetadataForCompare:
//   - apiVersion and kind are not compared; of metadata only labels and annotations are (without
//     kubectl.kubernetes.io/last-applied-configuration).
//   - musthave merges the object into the template and compares: maps are contained, a template
//     list matches when each template item merges into an equal item of the object's list (items
//     whose "name" fields agree are merged), extra object items are kept. mustonlyhave compares
//     the template as is and removes top-level fields the template lacks (status and metadata
//     excepted). Lists are compared regardless of order; strings that parse as quantities are
//     compared as quantities; other scalars are compared by their fmt.Sprint text.
//   - When only omitted zero values differ, a server-side dry-run update decides (here: whether
//     the merged object differs from the stored one outside status).
//
// controllers/configurationpolicy_utils.go, createStatus, generateMessageWithReason,
// getCombinedCompliancyDetailsMsg:
//   - Per template, only NonCompliant events are reported if there is one, else the Compliant
//     ones. Reasons are ordered: found as specified, created, updated, deleted, not found, found
//     but not as specified, missing as expected, found; then other reasons sorted, whose event
//     messages are used verbatim.
//   - The message of a known reason is "<resource>[ [<names>]] <verb>[ in namespace <ns>| in
//     namespaces: <ns1>, <ns2>]", where resource is the plural resource name (clusterversions),
//     verbs are "found as specified", "was created successfully", "was updated successfully",
//     "was deleted successfully", "not found", "found but not as specified", "missing as
//     expected" and "found". Objects with the same namespaces share one message with their names
//     joined by ", "; parts are joined by "; ".
//   - Events of one object form batches (e.g. "not found" then "was created"); each batch is a
//     status update, the last one is the template's condition (batchedEvents).
//
// controllers/configurationpolicy_controller.go, addConditionToStatus, addForUpdate,
// updatePolicyStatus, defaultComplianceMessage:
//   - A template's condition has type "violation" (NonCompliant) or "notification" (Compliant).
//     The policy is NonCompliant if any template is, else Compliant.
//   - The compliance message is "<Compliant|NonCompliant>; <type> - <message>[; <type> -
//     <message>...]" in template order, cut to 4096 characters ending in "...[truncated]". It is
//     sent as an event on the parent Policy when a condition or the compliance changed.
//   - No templates: "<name> contains no object templates to check, and thus has no violations".
//     No remediationAction: "Policy does not have a RemediationAction specified".
//
// governance-policy-framework-addon controllers/statussync/policy_status_sync.go, getDetails,
// mergeDetails, updateStatuses, parseComplianceFromMessage; controllers/templatesync
// template_sync.go, generatePendingMsg, emitTemplatePending; controllers/utils/events.go,
// SendEvent:
//   - The event message, trimmed, becomes a history entry of the replicated policy's template
//     details, newest first, at most 10; a template's compliance is read from the newest
//     message's prefix ("compliant", "pending", else NonCompliant).
//   - The replicated policy is NonCompliant if any template is, else Pending if any is, else
//     Compliant when all are; a template without history keeps the previous value.
//   - Pending messages are "Pending; Dependencies were not satisfied: 1 is still pending (Policy
//     name)" ("2 are still pending (Kind a, Kind b)"), template errors "NonCompliant;
//     template-error; <error>".
//
// # Checked against the real controller
//
// The tests run the real ConfigurationPolicy reconciler (v0.19.0, with fake clients made to treat
// status and dry runs like an API server) on the same inputs and require the same compliance,
// conditions, sent messages and stored objects: the table tests, the ClusterVersion upgrade, and
// random templates and objects (DIFFERENTIAL_CASES sets how many; 8,000 agreed when this was
// written). This found the controller's quirks kept here, e.g. that a template list item that is
// not a map is taken as a nil map when tried against a map item, so an empty map item claims it.
//
// # Templates
//
// spec.object-templates-raw is resolved on every evaluation by the controller's own template
// library, with lookup reading the store (templates.go); TestRawTemplatesMatchRealController
// checks it against the real controller.
//
// # Not simulated
//
// Go templates in spec.object-templates, the template functions of object-templates-raw that read
// objects other than through lookup (ErrTemplatesNotSimulated), spec.customMessage (the default
// message is used), pruneObjectBehavior, recreateOption IfRequired (the store never rejects an
// update), the comparison of a Secret's stringData with its decoded data, watches and evaluation
// intervals (every Evaluate call evaluates). The store applies no defaults, pruning or validation;
// the dry run is taken to change an object exactly when the merged fields differ from the stored
// ones outside status.
package configpolicy
