-- Argo CD health of a ran.openshift.io/v1alpha1 ClusterGroupUpgrade
-- (resource.customizations.health.ran.openshift.io_ClusterGroupUpgrade).
-- The canonical copy is pkg/argocd/health.lua; config/argocd/ holds copies that
-- `go test ./pkg/argocd -update` writes and `go test ./pkg/argocd` keeps equal.
local hs = {}

local function condition(status, kind)
  if status.conditions == nil then
    return nil
  end
  for _, c in ipairs(status.conditions) do
    if c.type == kind then
      return c
    end
  end
  return nil
end

-- The operator's one-line summary, else the Progressing condition's message.
local function message(status, fallback)
  if status.message ~= nil and status.message ~= "" then
    return status.message
  end
  local p = condition(status, "Progressing")
  if p ~= nil and p.message ~= nil and p.message ~= "" then
    return p.message
  end
  return fallback
end

-- A rollout held until a person acts: paused, waiting for an approval, or held before a batch
-- by a fleet freeze.
local function heldByPeople(spec, status)
  if spec.paused == true then
    return true
  end
  local w = status.waiting
  return w ~= nil and (w.reason == "WaitingForApproval" or w.reason == "Paused" or w.reason == "FleetFrozen")
end

-- A pause set in spec.paused leaves status.message saying what was running; say it is paused.
local function pausedMessage(spec, msg)
  if spec.paused == true and string.sub(msg, 1, 6) ~= "Paused" then
    return "Paused: " .. msg
  end
  return msg
end

-- The spec selects no cluster or names what does not exist: fixing it needs a commit.
local function invalid(status)
  for _, kind in ipairs({"ClustersSelected", "Validated"}) do
    local c = condition(status, kind)
    if c ~= nil and c.status == "False" then
      return true
    end
  end
  return false
end

local spec = obj.spec or {}
local status = obj.status or {}
local meta = obj.metadata or {}
local state = status.state

if state == nil or state == "" then
  hs.status = "Progressing"
  hs.message = "Waiting for cgu-operator to report a state"
elseif status.observedGeneration ~= nil and meta.generation ~= nil and status.observedGeneration < meta.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for cgu-operator to observe generation " .. meta.generation
elseif state == "Completed" then
  hs.status = "Healthy"
  hs.message = message(status, "Completed")
elseif state == "CannotStart" or state == "TimedOut" then
  hs.status = "Degraded"
  hs.message = message(status, state)
elseif state == "NotCompleted" then
  if heldByPeople(spec, status) then
    hs.status = "Suspended"
  else
    hs.status = "Progressing"
  end
  hs.message = pausedMessage(spec, message(status, state))
elseif state == "NotStarted" then
  if invalid(status) then
    hs.status = "Degraded"
  elseif spec.enable ~= true or heldByPeople(spec, status) then
    hs.status = "Suspended"
  else
    hs.status = "Progressing"
  end
  hs.message = pausedMessage(spec, message(status, state))
else
  hs.status = "Unknown"
  hs.message = "Unknown state " .. state
end
return hs
