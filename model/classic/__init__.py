"""The classic group protocol: JoinGroup / SyncGroup / Heartbeat / LeaveGroup with eager
and incremental cooperative (KIP-429) rebalancing and client-side assignors run by the
group leader (KIP-341 sticky generation marker).

A second protocol family of the same model: ``model.system.initial/enabled/step``
dispatch on ``Config.protocol``; the network (``model.records.Message``), the offset
commit API and the action vocabulary are shared with the consumer protocol (KIP-848).
"""
