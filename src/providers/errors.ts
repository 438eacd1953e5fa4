/** Errors an adapter throws when an upstream answer cannot be understood. */
export class MalformedUpstreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MalformedUpstreamError";
  }
}

export const malformed = (what: string) => new MalformedUpstreamError(`malformed upstream response: ${what}`);
