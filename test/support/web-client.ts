// The client lives in lib/ so that the benchmark can use it without importing test code.
export { WebClient } from '#local/web-client';
