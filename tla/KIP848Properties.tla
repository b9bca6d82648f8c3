-------------------------- MODULE KIP848Properties --------------------------
(***************************************************************************)
(* The properties of invariants/properties.py over the variables of        *)
(* KIP848.  A Python property name "Parent.Conjunct" is written            *)
(* Parent_Conjunct here (TLA+ identifiers have no dots).  State properties *)
(* are invariants; step properties are action formulas checked as          *)
(* [][P]_vars; Convergence is checked under weak fairness of the progress  *)
(* actions only (perturbations are never forced).                         *)
(***************************************************************************)
EXTENDS KIP848

Holds(m, p) == m \in DOMAIN members /\ p \in Holdings(members[m])
Targets(m, p) == m \in DOMAIN targetAssignment /\ p \in targetAssignment[m]
FreshTarget == groupEpoch = assignmentEpoch

\* ConsumerGroup.maybeUpdateGroupState
GroupStatus ==
    IF DOMAIN members = {} THEN "EMPTY"
    ELSE IF groupEpoch > assignmentEpoch THEN "ASSIGNING"
    ELSE IF \E m \in DOMAIN members :
              ~(members[m].state = "STABLE" /\ members[m].epoch = assignmentEpoch)
         THEN "RECONCILING"
    ELSE "STABLE"

---------------------------------------------------------------------------
(* State properties. *)

NoDoubleClientOwnership ==
    \A c1, c2 \in Clients, p \in Partitions :
        p \in clients[c1].owned /\ p \in clients[c2].owned => c1 = c2

NoDoubleMemberAssignment ==
    \A m1, m2 \in DOMAIN members, p \in Partitions : Holds(m1, p) /\ Holds(m2, p) => m1 = m2

OwnedPartitionsAreHeld ==
    \A c \in Clients, p \in Partitions :
        p \in clients[c].owned => clients[c].alive /\ Holds(c, p)

ValidTargetAssignment_Unique ==
    \A m1, m2 \in DOMAIN targetAssignment, p \in Partitions :
        Targets(m1, p) /\ Targets(m2, p) => m1 = m2

ValidTargetAssignment_OnlySubscribed ==
    FreshTarget =>
        \A m \in DOMAIN targetAssignment, p \in Partitions :
            Targets(m, p) => m \in DOMAIN members /\ Topic \in members[m].subscribed

ValidTargetAssignment_Covers ==
    FreshTarget =>
        \A p \in Partitions :
            (\E m \in DOMAIN members : Topic \in members[m].subscribed)
                => \E m \in DOMAIN targetAssignment : Targets(m, p)

EpochOrder_AssignmentEpoch == assignmentEpoch <= groupEpoch

EpochOrder_MemberEpoch == \A m \in DOMAIN members : members[m].epoch <= assignmentEpoch

GroupStatusConsistent_Empty == (GroupStatus = "EMPTY") <=> (DOMAIN members = {})

GroupStatusConsistent_Stable ==
    GroupStatus = "STABLE" =>
        /\ FreshTarget
        /\ \A m \in DOMAIN members :
              /\ members[m].epoch = assignmentEpoch
              /\ members[m].state = "STABLE"
              /\ members[m].pending = {}
              /\ members[m].assigned = Get(targetAssignment, m, {})

NoServerError == \A c \in Clients : clients[c].fatal # UNKNOWN_SERVER_ERROR

\* No zombies in the spec's scope (no live-client timers, no poll timeouts).
RevokedBeforeReassigned ==
    \A c1, c2 \in Clients, p \in Partitions :
        clients[c1].alive /\ clients[c1].status = "RECONCILING" /\ p \in clients[c1].revoking
            /\ p \in clients[c2].owned => c1 = c2

JoiningClientOwnsNothing ==
    \A c \in Clients : clients[c].alive /\ clients[c].status = "JOINING" => clients[c].owned = {}

\* KIP-1251 assignment epochs are outside the spec (groupcheck/tla/configs.py refuses
\* assignment_epochs): every commit is judged by strict epoch equality, and no commit
\* KIP-1251 must accept exists to be refused.
HolderCommitsAccepted == TRUE

---------------------------------------------------------------------------
(* Step properties (action formulas over a step). *)

MemberEpochMonotone_Step ==
    \A m \in DOMAIN members \cap DOMAIN members' :
        members'[m].epoch >= members[m].epoch \/ members'[m].epoch = -2

ClientEpochMonotone_Step ==
    \A c \in Clients : clients'[c].epoch >= clients[c].epoch \/ clients'[c].epoch = 0

HandOutOnlyReleased_Step ==
    \A m1 \in DOMAIN members', m2 \in DOMAIN members, p \in Partitions :
        (p \in members'[m1].assigned /\ ~Holds(m1, p) /\ Holds(m2, p)) => m1 = m2

CommitIsNew(p) ==
    /\ committedOffsets'[p] # None
    /\ \/ committedOffsets[p] = None
       \/ committedOffsets[p][1] # committedOffsets'[p][1]

OffsetCommitAtValidEpoch_Step ==
    \A p \in Partitions :
        CommitIsNew(p) =>
            LET m == committedOffsets'[p][1].member IN
            m \in DOMAIN members /\ members[m].epoch = committedOffsets'[p][1].epoch

\* KIP-211 offset expiry is outside the spec (no ExpireOffsets action, one topic that
\* always exists): no committed offset is ever removed, so every step satisfies it.
NoLiveOffsetExpires_Step ==
    \A p \in Partitions :
        (committedOffsets[p] # None /\ committedOffsets'[p] = None) =>
            \A m \in DOMAIN members : Topic \notin members[m].subscribed

MemberEpochMonotone == [][MemberEpochMonotone_Step]_vars
ClientEpochMonotone == [][ClientEpochMonotone_Step]_vars
HandOutOnlyReleased == [][HandOutOnlyReleased_Step]_vars
OffsetCommitAtValidEpoch == [][OffsetCommitAtValidEpoch_Step]_vars
NoLiveOffsetExpires == [][NoLiveOffsetExpires_Step]_vars

---------------------------------------------------------------------------
(* Convergence (invariants/liveness.py): once perturbations stop and       *)
(* messages flow, the group is STABLE (or EMPTY) and every client in it is *)
(* STABLE at its member's epoch, consuming exactly its assignment.         *)

Converged ==
    /\ GroupStatus \in {"STABLE", "EMPTY"}
    /\ \A c \in Clients :
          (clients[c].alive /\ clients[c].status \in InGroup \cup {"FENCED"}) =>
              /\ clients[c].status = "STABLE"
              /\ c \in DOMAIN members
              /\ clients[c].epoch = members[c].epoch
              /\ clients[c].owned = members[c].assigned

\* Weak fairness of every progress action of every client (its process, its messages, its
\* member's timers), as the Python fair schedule takes every enabled progress action within
\* a bounded delay.  (Fairness on each client's disjunction of actions would be too weak:
\* heartbeat round trips could then starve a pending Reconcile forever.)
\*
\* DeliverMessage's fairness is WF_vars spelled out, <>[]E => []<><<A>>_vars, with E
\* the non-empty channel instead of ENABLED <<DeliverMessage(c, dir)>>_vars.  The two are
\* equal: when the channel has a head, each branch of DeliverRequest and DeliverResponse
\* assigns every variable deterministically and takes the head, so the action is enabled
\* and never stutters; when it is empty, the action is disabled.  TLC evaluates ENABLED of
\* the coordinator's heartbeat handling (nested LETs through the assignor) so slowly that
\* the literal form took seconds per state; this form checks TINY1 in seconds.
ChannelOf(c, dir) == IF dir = "request" THEN toCoordinator[c] ELSE toClient[c]

DeliveryFairness(c, dir) ==
    []<>(ChannelOf(c, dir) = <<>>) \/ []<><<DeliverMessage(c, dir)>>_vars

ProgressFairness ==
    \A c \in Clients :
        /\ WF_vars(SendHeartbeat(c)) /\ WF_vars(Reconcile(c))
        /\ WF_vars(ReleaseAssignment(c)) /\ WF_vars(Rejoin(c)) /\ WF_vars(CommitOffsets(c))
        /\ WF_vars(RequestTimeout(c)) /\ WF_vars(SessionTimeout(c))
        /\ WF_vars(RebalanceTimeout(c))
        /\ \A dir \in Directions : DeliveryFairness(c, dir)

FairSpec == Spec /\ ProgressFairness

Convergence == <>[]Converged

=============================================================================
