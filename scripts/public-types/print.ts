/**
 * Prints a type the checker resolved (a zod schema's output or input) as plain TypeScript: object literals with each
 * property's JSDoc, unions, literals, arrays and records, and references by name to the other types being generated.
 * What it cannot print (functions, classes, generics) is an error naming the path, never a silent `any`.
 */
import ts from "typescript";

/** The types being generated, each with its name: a nested type that is one of them is printed as that name. */
export interface NamedTypes {
  /** The name of `type` when it is one of the generated types (other than `self`). */
  nameOf(type: ts.Type, self: ts.Type): string | undefined;
}

/** Prints types of one program. */
export class TypePrinter {
  constructor(
    private readonly checker: ts.TypeChecker,
    private readonly named: NamedTypes,
  ) {}

  /**
   * The declaration of `name`: a type alias, as zod's inferred types are, so that an object type keeps its implicit
   * index signature (assignable to `Record<string, unknown>`, which an interface is not).
   */
  declaration(name: string, type: ts.Type, doc: string): string {
    return `${jsDoc(doc, [])}export type ${name} = ${this.body(type, type, name)};\n`;
  }

  private print(type: ts.Type, self: ts.Type, path: string): string {
    const name = this.named.nameOf(type, self);
    return name ?? this.body(type, self, path);
  }

  private body(type: ts.Type, self: ts.Type, path: string): string {
    const c = this.checker;
    if (type.isUnion()) return this.union(type.types, self, path);
    if (type.flags & (ts.TypeFlags.String | ts.TypeFlags.Number | ts.TypeFlags.Boolean | ts.TypeFlags.Null))
      return c.typeToString(type);
    if (type.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Undefined)) return c.typeToString(type);
    if (type.isLiteral() || type.flags & ts.TypeFlags.BooleanLiteral) return c.typeToString(type);
    if (c.isArrayType(type)) return `${this.element(c.getTypeArguments(type as ts.TypeReference)[0]!, self, path)}[]`;
    if (c.isTupleType(type))
      return `[${c
        .getTypeArguments(type as ts.TypeReference)
        .map((t, i) => this.print(t, self, `${path}[${i}]`))
        .join(", ")}]`;
    if (isPlainObject(type)) return this.object(type, self, path);
    throw new Error(`${path}: cannot print ${c.typeToString(type)} as a plain type`);
  }

  /** An optional property's type without the `undefined` that `?` adds (kept apart when the type also holds null). */
  private withoutUndefined(type: ts.Type): ts.Type {
    if (!type.isUnion()) return type;
    if (type.types.some((t) => t.flags & ts.TypeFlags.Null))
      throw new Error(`${this.checker.typeToString(type)}: an optional nullable property is not supported`);
    return this.checker.getNonNullableType(type);
  }

  /** A union; `true | false` folds back into `boolean`. */
  private union(members: readonly ts.Type[], self: ts.Type, path: string): string {
    const bools = members.filter((t) => t.flags & ts.TypeFlags.BooleanLiteral);
    const rest = members.filter((t) => !(t.flags & ts.TypeFlags.BooleanLiteral));
    // Number literals in their order (the checker orders a union by when it met each type).
    if (rest.every((t) => t.isNumberLiteral()))
      rest.sort((a, b) => (a as ts.NumberLiteralType).value - (b as ts.NumberLiteralType).value);
    const parts = rest.map((t) => this.print(t, self, path));
    if (bools.length === 2) parts.push("boolean");
    else parts.push(...bools.map((t) => this.checker.typeToString(t)));
    return parts.join(" | ");
  }

  private element(type: ts.Type, self: ts.Type, path: string): string {
    const printed = this.print(type, self, `${path}[]`);
    return type.isUnion() && !this.named.nameOf(type, self) ? `(${printed})` : printed;
  }

  private object(type: ts.Type, self: ts.Type, path: string): string {
    const c = this.checker;
    const lines: string[] = [];
    for (const info of c.getIndexInfosOfType(type)) {
      const key = c.typeToString(info.keyType);
      lines.push(`[key: ${key}]: ${this.print(info.type, self, `${path}[${key}]`)};`);
    }
    for (const prop of c.getPropertiesOfType(type)) {
      const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0;
      const propType = c.getTypeOfSymbol(prop);
      const shown = optional ? this.withoutUndefined(propType) : propType;
      const docs = jsDoc(ts.displayPartsToString(prop.getDocumentationComment(c)), prop.getJsDocTags(c));
      const key = /^[A-Za-z_$][\w$]*$/.test(prop.name) ? prop.name : JSON.stringify(prop.name);
      lines.push(`${docs}${key}${optional ? "?" : ""}: ${this.print(shown, self, `${path}.${prop.name}`)};`);
    }
    return lines.length === 0 ? "{}" : `{\n${lines.join("\n")}\n}`;
  }
}

/** An object type we can print as a literal: no call or construct signatures. */
function isPlainObject(type: ts.Type): boolean {
  return (
    (type.flags & ts.TypeFlags.Object) !== 0 &&
    type.getCallSignatures().length === 0 &&
    type.getConstructSignatures().length === 0
  );
}

/** A JSDoc block of `text` and `tags` (a tag's text may run over several lines), or nothing when both are empty. */
export function jsDoc(text: string, tags: readonly ts.JSDocTagInfo[]): string {
  const lines = text ? text.split("\n") : [];
  for (const tag of tags)
    lines.push(...`@${tag.name}${tag.text ? ` ${ts.displayPartsToString(tag.text)}` : ""}`.split("\n"));
  if (lines.length === 0) return "";
  return `/**\n${lines.map((l) => (l ? ` * ${l}` : " *")).join("\n")}\n */\n`;
}
