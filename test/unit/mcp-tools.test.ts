import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import * as resources from '#domain/resources';
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

  it('are served where the domain names the MCP resource, whose metadata document has its route', () => {
    // The route table and the domain import nothing, so each holds the path; this keeps them one.
    expect(MCP_PATH).toBe(resources.MCP_PATH);
    const urls = { auth: 'https://example.com', api: 'https://example.com/api/v3' };
    for (const resource of resources.servedResources(urls)) {
      const document = new URL(resources.protectedResourceMetadataUrl(resource)).pathname;
      expect(
        ROUTES.some((row) => row.method === 'GET' && row.path === document),
        document,
      ).toBe(true);
    }
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
