/**
 * aws-local-stepfunctions 3 declares Node 22 and calls Promise.withResolvers (ES2024) in every Task
 * state; this machine runs Node 20. The library only calls it while running, so defining it when
 * this module loads (before any execution starts) is early enough.
 */
const promiseStatics = Promise as unknown as { withResolvers?: unknown };
if (!promiseStatics.withResolvers) {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>() {
      let resolve: (value: T | PromiseLike<T>) => void = () => {};
      let reject: (reason?: unknown) => void = () => {};
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}
