import { describe, expect, it } from 'vitest';
import { emfLine } from '#shared/log';

describe('emfLine', () => {
  it("is one line of CloudWatch's embedded metric format: a Count of the signal, by service", () => {
    const line = emfLine(
      'TokenCheckSucceeded',
      1_795_584_070_610,
      'OAuthImportService',
      'oauth-import-service',
    );
    expect(line).not.toContain('\n');
    expect(JSON.parse(line)).toEqual({
      _aws: {
        Timestamp: 1_795_584_070_610,
        CloudWatchMetrics: [
          {
            Namespace: 'OAuthImportService',
            Dimensions: [['service']],
            Metrics: [{ Name: 'TokenCheckSucceeded', Unit: 'Count' }],
          },
        ],
      },
      service: 'oauth-import-service',
      TokenCheckSucceeded: 1,
    });
  });
});
