import NetActivityContract

/// The contract's names, re-exported for code that imports only the service.
public typealias NetActivityBus = NetActivityContract.NetActivityBus
