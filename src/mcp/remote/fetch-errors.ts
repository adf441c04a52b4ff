// The two ways a guarded request fails, which the transports treat differently.

/** The request was refused by rune's policy (a host not granted, a private address): never retried. */
export class RemoteRefusedError extends Error {
  override name = 'RemoteRefusedError';
}

/** The server could not be reached or stopped answering: a reason to try reconnecting. */
export class RemoteNetworkError extends TypeError {
  override name = 'RemoteNetworkError';
}
