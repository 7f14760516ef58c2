/** A Step Functions API error: `type` is the SDK's exception class name (`__type` on the wire). */
export class ApiError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}
