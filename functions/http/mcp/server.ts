import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import * as z from 'zod/mini';
import { config } from '#shared/config';
import { errorBody, HttpError, notFound } from '#shared/errors';
import { logUnhandled } from '#shared/log';
import { pathParameterNames, routeFor } from '#shared/routes';
import type { PublicUrls } from '#shared/urls';
import { matchesParamRule, validateBody } from '#shared/validate';
import type { McpCaller } from './caller.ts';
import type { McpTool } from './tool.ts';
import { MCP_TOOLS, toolNamed } from './tools/index.ts';

/** What the server says it is (`serverInfo`). */
const SERVER_INFO = { name: 'oauth-import-service', title: 'Source imports', version: '1.0.0' };

const INSTRUCTIONS =
  'Migrates repositories into this service: create_repository, start_import (or start_import_batch), then poll get_import_status until complete; answer credentials or project choices with update_import; map authors; follow_origin, sync_now and cut_over to move over; lookup_revision finds the commit an origin revision became.';

/** A tool as `tools/list` gives it: its input's JSON Schema, and whether it only reads. */
function listed(tool: McpTool): Tool {
  const { $schema: _, ...inputSchema } = z.toJSONSchema(tool.input, { io: 'input' }) as Record<
    string,
    unknown
  >;
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: inputSchema as Tool['inputSchema'],
    annotations: { title: tool.title, readOnlyHint: tool.readOnly, openWorldHint: !tool.readOnly },
  };
}

/** The tools as `tools/list` gives them, made on the first list of the function's life. */
let listedTools: Tool[] | undefined;

/** The API's error as a tool's error result: its message as text, its whole body as structured content. */
function errorResult(error: HttpError): CallToolResult {
  const body = errorBody(error, config().docsUrl);
  const details = error.details.errors?.length ? ` ${JSON.stringify(error.details.errors)}` : '';
  return {
    isError: true,
    content: [{ type: 'text', text: `${error.status} ${error.message}${details}` }],
    structuredContent: { status: error.status, ...body },
  };
}

/**
 * Runs one tool as its REST route would: its input validated by the route's own schema (422 with
 * the same `errors`), its path parameters by the route table's rules (404), then the service call.
 * Errors are results (`isError`), so the model reads the API's words; a bug is a logged 500.
 */
async function callTool(
  tool: McpTool,
  caller: McpCaller,
  args: unknown,
  urls: PublicUrls,
): Promise<CallToolResult> {
  try {
    const input = validateBody(tool.input, tool.resource, args ?? {}) as Record<string, unknown>;
    for (const name of pathParameterNames(routeFor(tool.mirrors).path))
      if (name in input && !matchesParamRule(name, String(input[name]))) throw notFound();
    const output = await tool.run(caller, input, urls);
    return { content: [{ type: 'text', text: output.text }], structuredContent: output.structured };
  } catch (error) {
    if (error instanceof HttpError) return errorResult(error);
    logUnhandled(`mcp/${tool.name}`, undefined, error);
    return errorResult(new HttpError(500, 'Server Error'));
  }
}

/**
 * The JSON Schema validator a `Server` makes for itself otherwise (an Ajv instance, about half a
 * millisecond, for elicitation answers this endpoint never asks for): one for the function.
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/** A server for one request (the endpoint is stateless): the tools, acting for `caller`. */
export function mcpServer(caller: McpCaller, urls: PublicUrls): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator,
  });
  server.setRequestHandler(ListToolsRequestSchema, () => {
    listedTools ??= MCP_TOOLS.map(listed);
    return { tools: listedTools };
  });
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const tool = toolNamed(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return callTool(tool, caller, request.params.arguments, urls);
  });
  return server;
}
