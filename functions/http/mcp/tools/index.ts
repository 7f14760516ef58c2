import type { McpTool } from '../tool.ts';
import {
  applyAuthorsFileTool,
  applyBatchAuthorsFileTool,
  listAuthorsTool,
  mapAuthorTool,
} from './authors.ts';
import {
  cutOverBatchTool,
  followBatchTool,
  getBatchTool,
  listBatchesTool,
  startBatchTool,
  syncBatchTool,
} from './batches.ts';
import {
  importReportTool,
  importStatusTool,
  revisionTool,
  setLfsTool,
  startImportTool,
  updateImportTool,
} from './imports.ts';
import { createRepositoryTool, listRepositoriesTool } from './repositories.ts';
import { cutOverTool, followTool, getSyncTool, syncNowTool } from './sync.ts';

/** Every tool of the MCP endpoint, in the order a migration uses them. */
export const MCP_TOOLS: readonly McpTool[] = [
  listRepositoriesTool,
  createRepositoryTool,
  startImportTool,
  importStatusTool,
  updateImportTool,
  setLfsTool,
  importReportTool,
  listAuthorsTool,
  mapAuthorTool,
  applyAuthorsFileTool,
  getSyncTool,
  followTool,
  syncNowTool,
  cutOverTool,
  revisionTool,
  startBatchTool,
  listBatchesTool,
  getBatchTool,
  applyBatchAuthorsFileTool,
  followBatchTool,
  syncBatchTool,
  cutOverBatchTool,
];

const BY_NAME = new Map(MCP_TOOLS.map((tool) => [tool.name, tool]));

/** The tool of this name, if there is one. */
export const toolNamed = (name: unknown): McpTool | undefined =>
  typeof name === 'string' ? BY_NAME.get(name) : undefined;
