/** A rule every kind shares: the tokens of one sequence must fit the model's context. */
import type { IssueCollector } from "../../../core/errors";
import type { ModelArchitecture } from "../../../core/models/types";

/** Where a context-length problem is reported: the config path, and the value the user wrote there. */
export interface ReportedAt {
  readonly path: string;
  readonly value: number | undefined;
}

/** Reports `tokens` over the model's context at `at.path` (showing `at.value`, what the user wrote). */
export function checkContextLength(
  model: ModelArchitecture,
  tokens: number | undefined,
  at: ReportedAt,
  issues: IssueCollector,
): void {
  const context = model.maxSequenceLength ?? model.maxPositionEmbeddings;
  if (tokens !== undefined && context !== undefined && tokens > context) {
    issues.add(at.path, `${tokens} tokens exceed the model's context of ${context} tokens`, at.value);
  }
}
