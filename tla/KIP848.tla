------------------------------- MODULE KIP848 -------------------------------
(***************************************************************************)
(* The KIP-848 core: the group coordinator (ConsumerGroupHeartbeat and     *)
(* OffsetCommit handling, member reconciliation, the uniform assignor,     *)
(* session and rebalance timers), the Java client's membership state       *)
(* machine, and a network of per-client FIFO channels that may lose        *)
(* messages.                                                               *)
(*                                                                         *)
(* It mirrors the Python reference model (model/) action by action: every  *)
(* action here has the name of a model action class (SendHeartbeat,        *)
(* Reconcile, DeliverMessage, SessionTimeout ...), and every variable is a *)
(* projection of model.records.State (groupcheck/tla/project.py).  The     *)
(* scope is the model's dynamic-membership core: one topic "foo", one      *)
(* process incarnation per client (its member id is its name), no static   *)
(* members, the target assignment computed inside the heartbeat; the       *)
(* abstractions are listed in docs/fidelity.md ("The TLA+ specification"). *)
(*                                                                         *)
(* Standard modules only.                                                  *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, TLC

CONSTANTS
    Clients,                \* client names; each is also its member id
    ClientOrder,            \* Clients as a sequence in member-id order (assignor order)
    NumPartitions,          \* partitions of topic "foo": 0 .. NumPartitions - 1
    InitiallySubscribed,    \* clients JOINING in the initial state (others UNSUBSCRIBED)
    Perturbations,          \* perturbation families switched on (model.config.PERTURBATIONS)
    MaxPerturbations,       \* the perturbation budget (progress is never bounded)
    RebalanceTimeoutMs,     \* rebalance timeout the clients send when joining
    ReportPendingAdditions, \* model.config.Config.report_pending_additions
    CommitOnRevoke,         \* model.config.Config.commit_on_revoke
    AutoCommit,             \* model.config.Config.auto_commit
    Mutant                  \* "none", or the name of a mutated rule (groupcheck mutants)

VARIABLES
    groupEpoch,         \* Group.group_epoch
    assignmentEpoch,    \* Group.assignment_epoch
    targetAssignment,   \* Group.target_assignment: member id -> partitions
    members,            \* Group.members: member id -> member record
    partitionEpochs,    \* Group.partition_epochs, total: Free where absent
    committedOffsets,   \* Group.committed_offsets, total: None where absent
    clients,            \* State.clients: name -> client record
    toCoordinator,      \* State.network, requests of each client in send order
    toClient,           \* State.network, responses to each client in send order
    perturbations       \* State.perturbations

vars == <<groupEpoch, assignmentEpoch, targetAssignment, members, partitionEpochs,
          committedOffsets, clients, toCoordinator, toClient, perturbations>>
groupVars == <<groupEpoch, assignmentEpoch, targetAssignment, members, partitionEpochs>>

----------------------------------------------------------------------------
(* Values *)

Topic == "foo"
Partitions == 0 .. (NumPartitions - 1)
None == <<>>                 \* an absent optional value (Python None)
Some(x) == <<x>>
Free == -1                   \* partitionEpochs[p] = Free: no member holds p

\* Error codes with Kafka's numbers (model.status.ErrorCode).
NONE == 0
UNKNOWN_SERVER_ERROR == -1
UNKNOWN_MEMBER_ID == 25
INVALID_REQUEST == 42
FENCED_MEMBER_EPOCH == 110
STALE_MEMBER_EPOCH == 113
FencingErrors == {FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID}
FatalErrors == {UNKNOWN_SERVER_ERROR, INVALID_REQUEST}

LeaveGroupMemberEpoch == -1  \* records.LEAVE_GROUP_MEMBER_EPOCH

\* Client statuses (model.status.ClientStatus).
Heartbeating == {"JOINING", "RECONCILING", "ACKNOWLEDGING", "STABLE", "LEAVING"}
InGroup == {"JOINING", "RECONCILING", "ACKNOWLEDGING", "STABLE"}
Live == InGroup \cup {"FENCED", "PREPARE_LEAVING", "LEAVING"}

Min(S) == CHOOSE x \in S : \A y \in S : x <= y
RECURSIVE SortedSeq(_)
SortedSeq(S) == IF S = {} THEN <<>> ELSE <<Min(S)>> \o SortedSeq(S \ {Min(S)})
Range(s) == {s[i] : i \in DOMAIN s}
Take(s, n) == SubSeq(s, 1, IF n < Len(s) THEN n ELSE Len(s))
Drop(s, n) == IF n >= Len(s) THEN <<>> ELSE SubSeq(s, n + 1, Len(s))

Remove(f, k) == [x \in DOMAIN f \ {k} |-> f[x]]
Put(f, k, v) == [x \in DOMAIN f \cup {k} |-> IF x = k THEN v ELSE f[x]]
Get(f, k, default) == IF k \in DOMAIN f THEN f[k] ELSE default

----------------------------------------------------------------------------
(* The coordinator's group (model/consumer/coordinator.py). Operators take *)
(* and return a group record G so that a failed write can leave it         *)
(* unchanged.                                                              *)

NewMember == [epoch |-> 0, previousEpoch |-> -1, state |-> "STABLE",
              assigned |-> {}, pending |-> {}, subscribed |-> {}, timer |-> None]

Holdings(m) == m.assigned \cup m.pending

\* ConsumerGroup.maybeUpdatePartitionEpoch: remove old's entries (each must carry its
\* epoch), then add new's (each must be free).  ok = FALSE is Kafka's failed write.
UpdatePartitionEpochs(pe, old, new) ==
    IF Mutant = "bookkeeping-drops-pending" THEN
        LET afterOld == IF old = None THEN pe
                        ELSE [p \in Partitions |-> IF p \in old[1].assigned THEN Free ELSE pe[p]]
            withNew  == IF new = None THEN afterOld
                        ELSE [p \in Partitions |->
                                IF p \in new[1].assigned THEN new[1].epoch ELSE afterOld[p]]
            dropPend == IF old = None THEN withNew
                        ELSE [p \in Partitions |-> IF p \in old[1].pending THEN Free ELSE withNew[p]]
            addPend  == IF new = None THEN dropPend
                        ELSE [p \in Partitions |->
                                IF p \in new[1].pending THEN new[1].epoch ELSE dropPend[p]]
        IN [ok |-> TRUE, pe |-> addPend]
    ELSE IF old # None /\ new # None /\ old[1].epoch = new[1].epoch
            /\ old[1].assigned = new[1].assigned /\ old[1].pending = new[1].pending
    THEN [ok |-> TRUE, pe |-> pe]
    ELSE
        LET oldOk   == old = None \/ \A p \in Holdings(old[1]) : pe[p] = old[1].epoch
            cleared == IF old = None THEN pe
                       ELSE [p \in Partitions |-> IF p \in Holdings(old[1]) THEN Free ELSE pe[p]]
            newOk   == new = None \/ \A p \in Holdings(new[1]) : cleared[p] = Free
            added   == IF new = None THEN cleared
                       ELSE [p \in Partitions |->
                                IF p \in Holdings(new[1]) THEN new[1].epoch ELSE cleared[p]]
        IN [ok |-> oldOk /\ newOk, pe |-> added]

\* GroupMetadataManager.fenceMember: free the member's partitions, delete its target,
\* bump the group epoch.
RemoveMember(G, id) ==
    LET u == UpdatePartitionEpochs(G.pe, Some(G.members[id]), None)
    IN [ok |-> u.ok,
        g  |-> [ge |-> IF Mutant = "no-epoch-bump-on-fence" THEN G.ge ELSE G.ge + 1,
                ae |-> G.ae,
                ta |-> Remove(G.ta, id),
                members |-> Remove(G.members, id),
                pe |-> u.pe]]

\* UniformHomogeneousAssignmentBuilder for one topic (model/assignors/uniform.py).
\* ms: member ids in order; prev: the previous target assignment.
UniformAssign(ms, prev) ==
    LET n     == Len(ms)
        quota == NumPartitions \div n
        extra == NumPartitions % n
        Valid(m) == SortedSeq(Get(prev, m, {}) \cap Partitions)
        \* Phase 1: every member keeps its previous partitions up to the quota.
        RECURSIVE Keep(_, _, _, _)
        Keep(i, taken, res, cand) ==
            IF i > n THEN [taken |-> taken, res |-> res, cand |-> cand]
            ELSE LET m    == ms[i]
                     mine == SelectSeq(Valid(m), LAMBDA p : p \notin taken)
                 IN Keep(i + 1, taken \cup Range(Take(mine, quota)),
                         res @@ (m :> Take(mine, quota)), cand @@ (m :> Drop(mine, quota)))
        k1 == Keep(1, {}, <<>>, <<>>)
        \* Phase 2: members already holding an extra partition keep it while slots remain.
        RECURSIVE Extra(_, _, _, _)
        Extra(i, taken, res, gets) ==
            IF i > n \/ extra - Cardinality(gets) <= 0
            THEN [taken |-> taken, res |-> res, gets |-> gets]
            ELSE LET m     == ms[i]
                     spare == SelectSeq(k1.cand[m], LAMBDA p : p \notin taken)
                 IN IF spare = <<>> THEN Extra(i + 1, taken, res, gets)
                    ELSE Extra(i + 1, taken \cup {spare[1]},
                               [res EXCEPT ![m] = Append(@, spare[1])], gets \cup {m})
        k2 == Extra(1, k1.taken, k1.res, {})
        \* Phase 3: the remaining extra slots go to members in order.
        RECURSIVE Fill(_, _)
        Fill(i, gets) ==
            IF i > n \/ Cardinality(gets) >= extra THEN gets
            ELSE Fill(i + 1, gets \cup {ms[i]})
        gets == Fill(1, k2.gets)
        \* Phase 4: leftovers, in partition order, to members below their share.
        RECURSIVE Give(_, _, _)
        Give(i, left, res) ==
            IF i > n THEN res
            ELSE LET m    == ms[i]
                     want == quota + (IF m \in gets THEN 1 ELSE 0)
                     more == IF want > Len(res[m]) THEN want - Len(res[m]) ELSE 0
                 IN Give(i + 1, Drop(left, more), [res EXCEPT ![m] = @ \o Take(left, more)])
        final == Give(1, SortedSeq(Partitions \ k2.taken), k2.res)
    IN [m \in Range(ms) |-> Range(final[m])]

\* TargetAssignmentBuilder: a new target for every member, stamped with the group epoch.
ComputeTarget(G) ==
    LET ms  == SelectSeq(ClientOrder, LAMBDA m : m \in DOMAIN G.members)
        res == IF ms = <<>> THEN [m \in {} |-> {}] ELSE UniformAssign(ms, G.ta)
        ta  == [m \in DOMAIN G.members |->
                  IF Mutant = "assignor-assigns-twice" /\ NumPartitions > 0
                  THEN res[m] \cup {0} ELSE res[m]]
    IN [G EXCEPT !.ae = G.ge, !.ta = ta]

----------------------------------------------------------------------------
(* Member reconciliation (model/consumer/reconcile.py,                    *)
(* CurrentAssignmentBuilder).                                             *)

OwnsAny(owned, ps) == IF owned = None THEN ps # {} ELSE owned[1] \cap ps # {}

WithEpoch(m, e, st, assigned, pending) ==
    [m EXCEPT !.epoch = e, !.previousEpoch = m.epoch, !.state = st,
              !.assigned = assigned, !.pending = pending]

ComputeNextAssignment(m, targetEpoch, target, owned, pe) ==
    LET keep       == m.assigned \cap target
        revoke     == m.assigned \ keep
        held(p)    == pe[p] # Free /\ p \notin m.pending
        add        == {p \in target \ keep : ~held(p)}
        unreleased == \E p \in target \ keep : held(p)
        settled    == IF unreleased THEN "UNRELEASED_PARTITIONS" ELSE "STABLE"
    IN IF revoke # {} /\ OwnsAny(owned, revoke)
       THEN WithEpoch(m, m.epoch, "UNREVOKED_PARTITIONS", keep, revoke)
       ELSE WithEpoch(m, targetEpoch, settled, keep \cup add, {})

DefaultReconcile(m, targetEpoch, target, owned, pe) ==
    CASE m.state = "STABLE" ->
            IF m.epoch # targetEpoch
            THEN ComputeNextAssignment(m, targetEpoch, target, owned, pe)
            ELSE m
      [] m.state = "UNREVOKED_PARTITIONS" ->
            IF OwnsAny(owned, m.pending) THEN m
            ELSE ComputeNextAssignment(m, targetEpoch, target, owned, pe)
      [] OTHER -> ComputeNextAssignment(m, targetEpoch, target, owned, pe)

\* The rules.reconcile slot, with the mutants that replace it.
ReconcileMember(m, targetEpoch, target, owned, pe) ==
    CASE Mutant = "revoke-without-waiting" ->
            LET out == DefaultReconcile(m, targetEpoch, target, owned, pe)
            IN IF out.state = "UNREVOKED_PARTITIONS"
               THEN WithEpoch(out, targetEpoch, "STABLE", out.assigned, {})
               ELSE out
      [] Mutant = "ignore-partition-epochs" ->
            DefaultReconcile(m, targetEpoch, target, owned, [p \in Partitions |-> Free])
      [] Mutant = "ack-ignored" ->
            IF m.state = "UNREVOKED_PARTITIONS" THEN m
            ELSE DefaultReconcile(m, targetEpoch, target, owned, pe)
      [] OTHER -> DefaultReconcile(m, targetEpoch, target, owned, pe)

----------------------------------------------------------------------------
(* ConsumerGroupHeartbeat (GroupMetadataManager.consumerGroupHeartbeat).  *)

IsFull(req) == req.rebalanceTimeoutMs # -1 /\ req.subscribed # None /\ req.parts # None

ErrorResponse(conn, err) ==
    [kind |-> "HeartbeatResponse", conn |-> conn, error |-> err, epoch |-> 0,
     assignment |-> None]

\* GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid
ValidateHeartbeat(req) ==
    IF req.epoch < -2 THEN INVALID_REQUEST
    ELSE IF req.epoch = -2 THEN INVALID_REQUEST     \* -2 needs an instance id
    ELSE IF req.epoch = 0 /\ (req.rebalanceTimeoutMs = -1 \/ req.parts # Some({})
                              \/ req.subscribed = None)
         THEN INVALID_REQUEST
    ELSE NONE

\* throwIfConsumerGroupMemberEpochIsInvalid (KAFKA-19233: 0 rejoins).
CheckMemberEpoch(m, req) ==
    LET r == req.epoch IN
    IF r = m.epoch THEN NONE
    ELSE IF r = 0 THEN (IF Mutant = "reject-epoch-zero-rejoin" THEN FENCED_MEMBER_EPOCH ELSE NONE)
    ELSE IF r > m.epoch THEN FENCED_MEMBER_EPOCH
    ELSE IF r = m.previousEpoch /\ req.parts # None /\ req.parts[1] \subseteq m.assigned
         THEN NONE
    ELSE FENCED_MEMBER_EPOCH

\* The leave path (epoch -1): fence the member.
HandleLeave(G, c, req) ==
    IF c \notin DOMAIN G.members
    THEN [g |-> G, resp |-> ErrorResponse(req.conn, UNKNOWN_MEMBER_ID)]
    ELSE LET r == RemoveMember(G, c) IN
         IF ~r.ok THEN [g |-> G, resp |-> ErrorResponse(req.conn, UNKNOWN_SERVER_ERROR)]
         ELSE [g |-> r.g,
               resp |-> [kind |-> "HeartbeatResponse", conn |-> req.conn, error |-> NONE,
                         epoch |-> req.epoch, assignment |-> None]]

\* Resolve the member, update it, bump the group epoch, compute the target, reconcile,
\* write, respond.  A refused partition-epoch write answers UNKNOWN_SERVER_ERROR and
\* changes nothing.
HandleJoinOrHeartbeat(G, c, req) ==
    LET existing == c \in DOMAIN G.members
        resolveError ==
            IF ~existing THEN (IF req.epoch # 0 THEN UNKNOWN_MEMBER_ID ELSE NONE)
            ELSE CheckMemberEpoch(G.members[c], req)
    IN
    IF resolveError # NONE THEN [g |-> G, resp |-> ErrorResponse(req.conn, resolveError)]
    ELSE
    LET stored  == IF existing THEN Some(G.members[c]) ELSE None
        member  == IF existing THEN G.members[c] ELSE NewMember
        updated == [member EXCEPT !.subscribed =
                        IF req.subscribed # None THEN req.subscribed[1] ELSE @]
        bump    == updated.subscribed # member.subscribed
                   \/ (~existing /\ updated.subscribed # {})
        G1      == [G EXCEPT !.ge = IF bump THEN @ + 1 ELSE @,
                             !.members = Put(@, c, updated)]
        G2      == IF G1.ge > G1.ae THEN ComputeTarget(G1) ELSE G1
        target  == {p \in Get(G2.ta, c, {}) : Topic \in updated.subscribed}
        rec0    == ReconcileMember(updated, G2.ae, target, req.parts, G2.pe)
        rec     == IF rec0 # updated
                   THEN [rec0 EXCEPT !.timer = IF rec0.state = "UNREVOKED_PARTITIONS"
                                               THEN Some(rec0.epoch) ELSE None]
                   ELSE rec0
        u       == UpdatePartitionEpochs(G2.pe, stored, Some(rec))
        send    == req.epoch = 0 \/ IsFull(req) \/ rec.assigned # member.assigned
    IN IF ~u.ok THEN [g |-> G, resp |-> ErrorResponse(req.conn, UNKNOWN_SERVER_ERROR)]
       ELSE [g |-> [G2 EXCEPT !.members = Put(@, c, rec), !.pe = u.pe],
             resp |-> [kind |-> "HeartbeatResponse", conn |-> req.conn, error |-> NONE,
                       epoch |-> rec.epoch,
                       assignment |-> IF send THEN Some(rec.assigned) ELSE None]]

HandleHeartbeat(G, c, req) ==
    LET err == ValidateHeartbeat(req) IN
    IF err # NONE THEN [g |-> G, resp |-> ErrorResponse(req.conn, err)]
    ELSE IF req.epoch = LeaveGroupMemberEpoch THEN HandleLeave(G, c, req)
    ELSE HandleJoinOrHeartbeat(G, c, req)

\* ConsumerGroup.validateOffsetCommit (strict member-epoch equality).
ValidateOffsetCommit(G, c, req) ==
    IF req.epoch < 0 /\ DOMAIN G.members = {} THEN NONE
    ELSE IF c \notin DOMAIN G.members
         THEN (IF Mutant = "accept-commit-from-unknown-member" THEN NONE ELSE UNKNOWN_MEMBER_ID)
    ELSE IF req.epoch # G.members[c].epoch
         THEN (IF Mutant = "accept-stale-commit-epoch" THEN NONE ELSE STALE_MEMBER_EPOCH)
    ELSE NONE

Group == [ge |-> groupEpoch, ae |-> assignmentEpoch, ta |-> targetAssignment,
          members |-> members, pe |-> partitionEpochs]

SetGroup(G) ==
    /\ groupEpoch' = G.ge
    /\ assignmentEpoch' = G.ae
    /\ targetAssignment' = G.ta
    /\ members' = G.members
    /\ partitionEpochs' = G.pe

----------------------------------------------------------------------------
(* The client (model/consumer/client.py, AbstractMembershipManager).      *)

\* The last reconciled assignment (AbstractMembershipManager.currentAssignment): while a
\* reconciliation runs, what the client owned before it, revoked partitions included.
ReportedPartitions(cl) ==
    LET reconciled == cl.owned \cup cl.revoking IN
    IF ReportPendingAdditions /\ cl.target # None /\ cl.status \in {"RECONCILING", "ACKNOWLEDGING"}
    THEN reconciled \cup cl.target[1] \cup (IF cl.reconciling = None THEN {} ELSE cl.reconciling[1])
    ELSE reconciled

ResendOwned(sent) == IF sent = None THEN None ELSE Some([parts |-> None])

FinishReconcile(cl) ==
    IF cl.reconciling = None THEN cl
    ELSE [cl EXCEPT !.owned = cl.reconciling[1], !.reconciling = None, !.revoking = {},
                    !.status = IF @ = "RECONCILING" THEN "ACKNOWLEDGING" ELSE @,
                    !.sent = ResendOwned(@)]

OnCommitResponse(cl) ==
    IF ~cl.commitInFlight THEN cl
    ELSE LET c1 == [cl EXCEPT !.commitInFlight = FALSE]
         IN IF c1.revoking # {} /\ c1.reconciling # None THEN FinishReconcile(c1) ELSE c1

OnHeartbeatError(cl, err) ==
    IF err \in FencingErrors THEN
        IF cl.status \in {"PREPARE_LEAVING", "LEAVING", "UNSUBSCRIBED"}
        THEN [cl EXCEPT !.status = "UNSUBSCRIBED", !.epoch = 0, !.sent = None]
        ELSE [cl EXCEPT !.status = "FENCED", !.epoch = 0, !.owned = {}, !.target = None,
                        !.reconciling = None, !.revoking = {}, !.sent = None]
    ELSE IF err \in FatalErrors /\ cl.status # "UNSUBSCRIBED"
    THEN [cl EXCEPT !.status = "FATAL", !.owned = {}, !.target = None, !.reconciling = None,
                    !.revoking = {}, !.sent = None, !.fatal = err]
    ELSE [cl EXCEPT !.sent = None]

OnHeartbeatResponse(cl0, resp) ==
    IF ~cl0.hbInFlight THEN cl0
    ELSE LET cl == [cl0 EXCEPT !.hbInFlight = FALSE] IN
    IF resp.error # NONE THEN OnHeartbeatError(cl, resp.error)
    ELSE IF cl.status \notin InGroup \/ resp.epoch < 0 THEN cl
    ELSE LET c2 == [cl EXCEPT !.epoch = resp.epoch] IN
         IF resp.assignment = None \/ Some(resp.assignment[1]) = c2.target THEN c2
         ELSE [c2 EXCEPT !.target = resp.assignment, !.status = "RECONCILING"]

Disconnect(cl) ==
    LET c1 == IF cl.commitInFlight THEN OnCommitResponse(cl) ELSE cl
    IN [c1 EXCEPT !.hbInFlight = FALSE, !.sent = None, !.connection = @ + 1]

HeartbeatRequest(cl, owned, full) ==
    [kind |-> "HeartbeatRequest", conn |-> cl.connection,
     epoch |-> IF cl.status = "JOINING" THEN 0 ELSE cl.epoch,
     rebalanceTimeoutMs |-> IF full THEN RebalanceTimeoutMs ELSE -1,
     subscribed |-> IF full \/ cl.sent = None THEN Some({Topic}) ELSE None,
     parts |-> IF full \/ cl.sent = None \/ cl.sent[1].parts # Some(owned)
               THEN Some(owned) ELSE None]

CommitRequest(cl, epoch, ps) ==
    [kind |-> "OffsetCommitRequest", conn |-> cl.connection, epoch |-> epoch, parts |-> ps]

----------------------------------------------------------------------------
(* Initial state (model.system.initial). *)

Init ==
    /\ groupEpoch = 0
    /\ assignmentEpoch = 0
    /\ targetAssignment = [m \in {} |-> {}]
    /\ members = [m \in {} |-> NewMember]
    /\ partitionEpochs = [p \in Partitions |-> Free]
    /\ committedOffsets = [p \in Partitions |-> None]
    /\ clients = [c \in Clients |->
                    [alive |-> TRUE,
                     status |-> IF c \in InitiallySubscribed THEN "JOINING" ELSE "UNSUBSCRIBED",
                     epoch |-> 0, owned |-> {}, target |-> None, reconciling |-> None,
                     revoking |-> {}, hbInFlight |-> FALSE, commitInFlight |-> FALSE,
                     connection |-> 0, sent |-> None, fatal |-> NONE]]
    /\ toCoordinator = [c \in Clients |-> <<>>]
    /\ toClient = [c \in Clients |-> <<>>]
    /\ perturbations = 0

----------------------------------------------------------------------------
(* Progress actions. *)

SendClient(c, cl, msg) ==
    /\ clients' = [clients EXCEPT ![c] = cl]
    /\ toCoordinator' = [toCoordinator EXCEPT ![c] = Append(@, msg)]

SendHeartbeat(c) ==
    LET cl == clients[c] IN
    /\ cl.alive /\ ~cl.hbInFlight /\ cl.status \in Heartbeating
    /\ IF cl.status = "LEAVING"
       THEN SendClient(c, [cl EXCEPT !.status = "UNSUBSCRIBED", !.epoch = 0,
                                     !.hbInFlight = TRUE, !.sent = None],
                       [kind |-> "HeartbeatRequest", conn |-> cl.connection,
                        epoch |-> LeaveGroupMemberEpoch, rebalanceTimeoutMs |-> -1,
                        subscribed |-> None, parts |-> None])
       ELSE LET owned == ReportedPartitions(cl)
                full  == cl.sent = None \/ cl.status = "JOINING" \/ cl.epoch = 0
                req0  == HeartbeatRequest(cl, owned, full)
                req   == IF Mutant = "client-acks-before-revoking"
                            /\ cl.status = "RECONCILING" /\ cl.target # None
                         THEN [req0 EXCEPT !.parts = Some(cl.target[1])] ELSE req0
                status == IF cl.status = "ACKNOWLEDGING"
                          THEN (IF cl.target = Some(cl.owned) THEN "STABLE" ELSE "RECONCILING")
                          ELSE cl.status
            IN SendClient(c, [cl EXCEPT !.status = status, !.hbInFlight = TRUE,
                                        !.sent = Some([parts |-> Some(owned)])], req)
    /\ UNCHANGED <<groupVars, committedOffsets, toClient, perturbations>>

Reconcile(c) ==
    LET cl == clients[c] IN
    /\ cl.alive /\ cl.status = "RECONCILING" /\ cl.reconciling = None /\ cl.target # None
    /\ LET target  == cl.target[1]
           revoked == cl.owned \ target
       IN IF revoked # {} /\ CommitOnRevoke /\ cl.epoch > 0
          THEN SendClient(c, [cl EXCEPT !.owned = @ \ revoked, !.reconciling = Some(target),
                                        !.revoking = revoked, !.commitInFlight = TRUE],
                          CommitRequest(cl, cl.epoch, revoked))
          ELSE /\ clients' = [clients EXCEPT ![c] = [cl EXCEPT !.owned = target,
                                 !.status = "ACKNOWLEDGING", !.reconciling = None,
                                 !.sent = ResendOwned(@)]]
               /\ UNCHANGED toCoordinator
    /\ UNCHANGED <<groupVars, committedOffsets, toClient, perturbations>>

ReleaseAssignment(c) ==
    LET cl     == clients[c]
        commit == cl.owned # {} /\ ~cl.commitInFlight /\ cl.epoch > 0
        next   == [cl EXCEPT !.status = "LEAVING", !.owned = {}, !.target = None,
                             !.reconciling = None, !.revoking = {},
                             !.commitInFlight = @ \/ commit]
    IN
    /\ cl.alive /\ cl.status = "PREPARE_LEAVING" /\ cl.reconciling = None
    /\ IF commit THEN SendClient(c, next, CommitRequest(cl, cl.epoch, cl.owned))
       ELSE clients' = [clients EXCEPT ![c] = next] /\ UNCHANGED toCoordinator
    /\ UNCHANGED <<groupVars, committedOffsets, toClient, perturbations>>

Rejoin(c) ==
    /\ clients[c].alive /\ clients[c].status = "FENCED"
    /\ clients' = [clients EXCEPT ![c].status = "JOINING", ![c].epoch = 0]
    /\ UNCHANGED <<groupVars, committedOffsets, toCoordinator, toClient, perturbations>>

CommitOffsets(c) ==
    LET cl == clients[c] IN
    /\ AutoCommit /\ cl.alive /\ cl.owned # {} /\ ~cl.commitInFlight /\ cl.reconciling = None
    /\ cl.epoch > 0 /\ cl.status \in InGroup
    /\ SendClient(c, [cl EXCEPT !.commitInFlight = TRUE], CommitRequest(cl, cl.epoch, cl.owned))
    /\ UNCHANGED <<groupVars, committedOffsets, toClient, perturbations>>

\* The coordinator takes the next request of client c (one TCP connection at a time).
DeliverRequest(c) ==
    LET msg == Head(toCoordinator[c]) IN
    /\ toCoordinator[c] # <<>>
    /\ toCoordinator' = [toCoordinator EXCEPT ![c] = Tail(@)]
    /\ IF msg.kind = "HeartbeatRequest"
       THEN LET r == HandleHeartbeat(Group, c, msg) IN
            /\ SetGroup(r.g)
            /\ toClient' = [toClient EXCEPT ![c] = Append(@, r.resp)]
            /\ UNCHANGED committedOffsets
       ELSE LET err == ValidateOffsetCommit(Group, c, msg) IN
            /\ toClient' = [toClient EXCEPT ![c] = Append(@,
                   [kind |-> "OffsetCommitResponse", conn |-> msg.conn, error |-> err,
                    parts |-> msg.parts])]
            /\ committedOffsets' =
                   IF err = NONE /\ msg.parts # {}
                   THEN [p \in Partitions |-> IF p \in msg.parts
                                              THEN Some([member |-> c, epoch |-> msg.epoch])
                                              ELSE committedOffsets[p]]
                   ELSE committedOffsets
            /\ UNCHANGED groupVars
    /\ UNCHANGED <<clients, perturbations>>

\* Client c reads the next response; a closed connection's responses are never read.
DeliverResponse(c) ==
    LET msg == Head(toClient[c])
        cl  == clients[c]
    IN
    /\ toClient[c] # <<>>
    /\ toClient' = [toClient EXCEPT ![c] = Tail(@)]
    /\ clients' =
        IF ~cl.alive \/ msg.conn # cl.connection THEN clients
        ELSE IF msg.kind = "HeartbeatResponse"
        THEN [clients EXCEPT ![c] =
                IF Mutant = "adopt-negative-epoch" /\ msg.error = NONE /\ msg.epoch < 0
                   /\ cl.hbInFlight
                THEN [OnHeartbeatResponse(cl, msg) EXCEPT !.epoch = msg.epoch]
                ELSE OnHeartbeatResponse(cl, msg)]
        ELSE [clients EXCEPT ![c] = OnCommitResponse(cl)]
    /\ UNCHANGED <<groupVars, committedOffsets, toCoordinator, perturbations>>

DeliverMessage(c, dir) == IF dir = "request" THEN DeliverRequest(c) ELSE DeliverResponse(c)

PendingOnConnection(c, kinds) ==
    \E i \in DOMAIN toCoordinator[c] \cup DOMAIN toClient[c] :
        \/ i \in DOMAIN toCoordinator[c] /\ toCoordinator[c][i].kind \in kinds
              /\ toCoordinator[c][i].conn = clients[c].connection
        \/ i \in DOMAIN toClient[c] /\ toClient[c][i].kind \in kinds
              /\ toClient[c][i].conn = clients[c].connection

RequestTimeout(c) ==
    LET cl == clients[c] IN
    /\ cl.alive
    /\ \/ cl.hbInFlight /\ ~PendingOnConnection(c, {"HeartbeatRequest", "HeartbeatResponse"})
       \/ cl.commitInFlight
          /\ ~PendingOnConnection(c, {"OffsetCommitRequest", "OffsetCommitResponse"})
    /\ clients' = [clients EXCEPT ![c] = Disconnect(cl)]
    /\ UNCHANGED <<groupVars, committedOffsets, toCoordinator, toClient, perturbations>>

ProcessLive(m) == m \in Clients /\ clients[m].alive /\ clients[m].status \in Live

SessionTimeout(m) ==
    /\ m \in DOMAIN members /\ ~ProcessLive(m)
    /\ LET r == RemoveMember(Group, m) IN
       IF r.ok THEN SetGroup(r.g) ELSE UNCHANGED groupVars
    /\ UNCHANGED <<committedOffsets, clients, toCoordinator, toClient, perturbations>>

RebalanceTimeout(m) ==
    /\ m \in DOMAIN members /\ ~ProcessLive(m)
    /\ members[m].timer = Some(members[m].epoch)
    /\ LET r == RemoveMember(Group, m) IN
       IF r.ok THEN SetGroup(r.g) ELSE UNCHANGED groupVars
    /\ UNCHANGED <<committedOffsets, clients, toCoordinator, toClient, perturbations>>

----------------------------------------------------------------------------
(* Perturbations: each spends one unit of the budget. *)

Perturb(family) == family \in Perturbations /\ perturbations < MaxPerturbations
                   /\ perturbations' = perturbations + 1

Subscribe(c) ==
    /\ Perturb("Subscribe")
    /\ clients[c].alive /\ clients[c].status = "UNSUBSCRIBED"
    /\ clients' = [clients EXCEPT ![c].status = "JOINING", ![c].epoch = 0, ![c].sent = None,
                                  ![c].target = None]
    /\ UNCHANGED <<groupVars, committedOffsets, toCoordinator, toClient>>

Leave(c) ==
    /\ Perturb("Leave")
    /\ clients[c].alive /\ clients[c].status \in InGroup
    /\ clients' = [clients EXCEPT ![c].status = "PREPARE_LEAVING"]
    /\ UNCHANGED <<groupVars, committedOffsets, toCoordinator, toClient>>

Crash(c) ==
    /\ Perturb("Crash")
    /\ clients[c].alive
    /\ clients' = [clients EXCEPT ![c] = [@ EXCEPT !.alive = FALSE, !.status = "UNSUBSCRIBED",
                      !.epoch = 0, !.owned = {}, !.target = None, !.reconciling = None,
                      !.revoking = {}, !.hbInFlight = FALSE, !.commitInFlight = FALSE,
                      !.sent = None, !.fatal = NONE]]
    /\ UNCHANGED <<groupVars, committedOffsets, toCoordinator, toClient>>

LoseMessage(c, dir) ==
    /\ Perturb("LoseMessage")
    /\ IF dir = "request"
       THEN toCoordinator[c] # <<>> /\ toCoordinator' = [toCoordinator EXCEPT ![c] = Tail(@)]
                                  /\ UNCHANGED toClient
       ELSE toClient[c] # <<>> /\ toClient' = [toClient EXCEPT ![c] = Tail(@)]
                             /\ UNCHANGED toCoordinator
    /\ UNCHANGED <<groupVars, committedOffsets, clients>>

----------------------------------------------------------------------------

Directions == {"request", "response"}

Progress ==
    \/ \E c \in Clients, dir \in Directions : DeliverMessage(c, dir)
    \/ \E c \in Clients :
        \/ SendHeartbeat(c) \/ Reconcile(c) \/ ReleaseAssignment(c) \/ Rejoin(c)
        \/ CommitOffsets(c) \/ RequestTimeout(c)
    \/ \E m \in DOMAIN members : SessionTimeout(m) \/ RebalanceTimeout(m)

Perturbation ==
    \/ \E c \in Clients : Subscribe(c) \/ Leave(c) \/ Crash(c)
    \/ \E c \in Clients, dir \in Directions : LoseMessage(c, dir)

Next == Progress \/ Perturbation

Spec == Init /\ [][Next]_vars

=============================================================================
