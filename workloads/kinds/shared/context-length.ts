/** A rule every kind shares: the tokens of one sequence must fit the model's context. */
import type { IssueCollector } from "../../../core/errors";
import type { ModelArchitecture } from "../../../core/models/types";

/** Reports `tokens` over the model's context at `path` (showing `value`, what the user wrote). */
export function checkContextLength(
  model: ModelArchitecture,
  tokens: number | undefined,
  path: string,
  value: number | undefined,
  issues: IssueCollector,
): void {
  const context = model.maxSequenceLength ?? model.maxPositionEmbeddings;
  if (tokens !== undefined && context !== undefined && tokens > context) {
    issues.add(path, `${tokens} tokens exceed the model's context of ${context} tokens`, value);
  }
}
