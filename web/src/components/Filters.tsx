// Filter controls shared by the list pages: a labelled select and a labelled
// input, named so links and tests can address them.

export interface FilterOption {
  value: string;
  label: string;
}

/** SelectFilter is a labelled select; with `all`, an empty first option clears the filter. */
export function SelectFilter(props: {
  label: string;
  name: string;
  value: string;
  onChange: (value: string) => void;
  options: FilterOption[];
  all?: string;
}) {
  return (
    <label className="filter">
      <span>{props.label}</span>
      <select name={props.name} value={props.value} onChange={(e) => props.onChange(e.target.value)}>
        {props.all !== undefined && <option value="">{props.all}</option>}
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** InputFilter is a labelled date, datetime-local or text input. */
export function InputFilter(props: {
  label: string;
  name: string;
  type: 'date' | 'datetime-local' | 'text';
  value: string;
  onChange: (value: string) => void;
}) {
  return (
    <label className="filter">
      <span>{props.label}</span>
      <input type={props.type} name={props.name} value={props.value} onChange={(e) => props.onChange(e.target.value)} />
    </label>
  );
}
