import * as z from 'zod/mini';
import type { PublicUrls } from '#shared/urls';
import type { McpCaller } from './caller.ts';

/** A tool's answer: a sentence for the model, and the REST route's JSON as structured content. */
export interface ToolOutput {
  readonly text: string;
  readonly structured: Record<string, unknown>;
}

/**
 * One MCP tool. It mirrors one REST route (`mirrors`, a handler id of the route table): it needs
 * that row's scopes, its path parameters pass that row's rules, and it calls the service function
 * the route's handler calls, with the handler's own body schema where the route takes a body.
 */
export interface McpTool<Input = Record<string, unknown>> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly mirrors: string;
  /** The input's schema; its JSON Schema is the tool's `inputSchema`. */
  readonly input: z.ZodMiniObject;
  /** The `resource` named in validation errors, as the REST route names it. */
  readonly resource: string;
  /** Reads only (MCP's `readOnlyHint`). */
  readonly readOnly: boolean;
  readonly run: (caller: McpCaller, input: Input, urls: PublicUrls) => Promise<ToolOutput>;
}

/** Defines a tool with its input's type inferred from its schema. */
export const tool = <Shape extends z.core.$ZodLooseShape>(
  definition: Omit<McpTool, 'input' | 'run'> & {
    readonly input: z.ZodMiniObject<Shape>;
    readonly run: (
      caller: McpCaller,
      input: z.infer<z.ZodMiniObject<Shape>>,
      urls: PublicUrls,
    ) => Promise<ToolOutput>;
  },
): McpTool => definition as unknown as McpTool;

/** `owner` and `repo`, as the REST paths name them. */
export const repositoryFields = {
  owner: z.string().check(z.describe("The repository owner's login (the token's user).")),
  repo: z.string().check(z.describe("The repository's name.")),
};

/** `{owner}/{repo}` for the text of an answer. */
export const fullName = (input: { owner: string; repo: string }): string => `${input.owner}/${input.repo}`;

/** GitHub's page-number paging as inputs (`page`, `per_page` ≤ 100). */
export const pageFields = {
  page: z.optional(z.number().check(z.describe('Page number, from 1.'))),
  per_page: z.optional(z.number().check(z.describe('Items per page (at most 100, default 30).'))),
};

/** The query a REST list route would have had from the same inputs. */
export const pageQuery = (input: { page?: number | undefined; per_page?: number | undefined }) => ({
  page: input.page === undefined ? undefined : String(input.page),
  per_page: input.per_page === undefined ? undefined : String(input.per_page),
});

/** Tells an agent how long work is followed (the import runs in the background). */
export const POLL_HINT =
  'Returns at once; the import runs in the background: call get_import_status every few seconds until its status is complete, error, or asks for something (auth_failed, detection_needs_auth, detection_found_multiple).';
