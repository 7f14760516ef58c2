import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { toolScopes } from '#http/mcp/step-up';
import { MCP_TOOLS } from '#http/mcp/tools/index';
import { MCP_PATH, ROUTES, routeFor } from '#shared/routes';

const endpoint = routeFor('mcp/endpoint');

describe('the MCP tools', () => {
  it('each mirror a row of the route table and need exactly its scopes', () => {
    for (const tool of MCP_TOOLS) {
      const route = ROUTES.find((row) => row.handler === tool.mirrors);
      expect(route, tool.name).toBeDefined();
      expect(toolScopes(tool.name)).toEqual(route?.scopes);
    }
    expect(new Set(MCP_TOOLS.map((tool) => tool.name)).size).toBe(MCP_TOOLS.length);
  });

  it("give the endpoint's function every capability a mirrored route's function has", () => {
    const needed = new Set(MCP_TOOLS.flatMap((tool) => routeFor(tool.mirrors).uses ?? []));
    expect(new Set(endpoint.uses)).toEqual(needed);
    expect(endpoint.table).toBe('RW');
    expect(endpoint.path).toBe(MCP_PATH);
  });

  it('have object input schemas that name the path parameters of their routes', () => {
    for (const tool of MCP_TOOLS) {
      const schema = z.toJSONSchema(tool.input) as { type: string; properties: Record<string, unknown> };
      expect(schema.type, tool.name).toBe('object');
      for (const name of routeFor(tool.mirrors).path.match(/\{(\w+)\}/g) ?? [])
        expect(Object.keys(schema.properties), tool.name).toContain(name.slice(1, -1));
    }
  });
});
