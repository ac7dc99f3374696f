import { useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useI18n } from '../app/i18n';
import { useIdempotentMutation } from '../app/idempotent';
import { useFormat, useViewer } from '../app/viewer';
import { Card, Field, PageHeader } from '../components/Page';
import { Alert, useErrorText } from '../components/States';
import { graphql } from '../gql';
import type { CampaignType, CodeSource, CreateCampaignInput } from '../gql/graphql';
import { localInputToUtc, utcToLocalInput } from '../lib/dates';
import type { MessageKey } from '../lib/i18n';
import { parseYuanToFen } from '../lib/money';
import { attemptKey } from '../lib/requestId';
import { rulesSentence, WEEKDAYS, type Rules, type WeekdayName } from '../lib/rules';

const CreateCampaignDocument = graphql(`
  mutation CreateCampaign($input: CreateCampaignInput!) {
    createCampaign(input: $input) {
      id
      name
    }
  }
`);

interface Form {
  name: string;
  type: CampaignType;
  value: string;
  maxDiscount: string;
  minSpend: string;
  validFrom: string;
  validTo: string;
  storeIds: string[];
  totalQuantity: string;
  refundWindowMinutes: string;
  perCustomerLimit: string;
  codeSource: CodeSource;
  usesPerCoupon: string;
  validDaysAfterIssue: string;
  weekdays: WeekdayName[];
  windowFrom: string;
  windowTo: string;
  perCustomerDailyLimit: string;
  perStoreDailyLimit: string;
  stackable: boolean;
}

type Errors = Partial<Record<keyof Form, MessageKey>>;

const wholeNumber = (s: string, min: number) => /^\d+$/.test(s.trim()) && Number(s) >= min && Number(s) <= 2_147_483_647;

const hhmm = (s: string) => /^([01]\d|2[0-3]):[0-5]\d$/.test(s.trim());
const optionalLimit = (s: string) => (s.trim() === '' ? undefined : wholeNumber(s, 1) ? Number(s) : null);

/** rulesOf reads the use rules of the form, as far as they are valid, for the preview. */
function rulesOf(f: Form): Rules {
  const n = (s: string) => (wholeNumber(s, 1) ? Number(s) : undefined);
  return {
    usesPerCoupon: n(f.usesPerCoupon),
    weekdays: f.weekdays,
    window: hhmm(f.windowFrom) && hhmm(f.windowTo) && f.windowFrom !== f.windowTo ? { from: f.windowFrom.trim(), to: f.windowTo.trim() } : undefined,
    perCustomerDailyLimit: n(f.perCustomerDailyLimit),
    perStoreDailyLimit: n(f.perStoreDailyLimit),
    validDaysAfterIssue: n(f.validDaysAfterIssue),
  };
}

/** validate turns the form into the API's input, or says which fields are wrong. */
function validate(f: Form, tz: string): { input?: CreateCampaignInput; errors: Errors } {
  const errors: Errors = {};
  const name = f.name.trim();
  if (!name || name.length > 100) errors.name = 'create.bad.name';
  let value: number | null = null;
  if (f.type === 'DISCOUNT') {
    value = wholeNumber(f.value, 1) && Number(f.value) <= 99 ? Number(f.value) : null;
    if (value === null) errors.value = 'create.bad.value';
  } else {
    value = parseYuanToFen(f.value);
    if (value === null || value < 1) errors.value = 'create.bad.money';
  }
  const maxDiscount = f.maxDiscount.trim() === '' ? 0 : parseYuanToFen(f.maxDiscount);
  if (maxDiscount === null) errors.maxDiscount = 'create.bad.money';
  const minSpend = f.minSpend.trim() === '' ? 0 : parseYuanToFen(f.minSpend);
  if (minSpend === null) errors.minSpend = 'create.bad.money';
  const from = localInputToUtc(f.validFrom, tz);
  const to = localInputToUtc(f.validTo, tz);
  if (!from) errors.validFrom = 'create.bad.dates';
  if (!to || (from && to <= from)) errors.validTo = 'create.bad.dates';
  if (!wholeNumber(f.totalQuantity, 1)) errors.totalQuantity = 'create.bad.quantity';
  if (!wholeNumber(f.refundWindowMinutes, 0)) errors.refundWindowMinutes = 'create.bad.int';
  if (!wholeNumber(f.perCustomerLimit, 0)) errors.perCustomerLimit = 'create.bad.int';
  if (!wholeNumber(f.usesPerCoupon, 1) || Number(f.usesPerCoupon) > 100) errors.usesPerCoupon = 'create.bad.uses';
  const validDays = optionalLimit(f.validDaysAfterIssue);
  if (validDays === null) errors.validDaysAfterIssue = 'create.bad.limit';
  const perCustomerDay = optionalLimit(f.perCustomerDailyLimit);
  if (perCustomerDay === null) errors.perCustomerDailyLimit = 'create.bad.limit';
  const perStoreDay = optionalLimit(f.perStoreDailyLimit);
  if (perStoreDay === null) errors.perStoreDailyLimit = 'create.bad.limit';
  const noWindow = f.windowFrom.trim() === '' && f.windowTo.trim() === '';
  if (!noWindow && (!hhmm(f.windowFrom) || !hhmm(f.windowTo) || f.windowFrom.trim() === f.windowTo.trim())) errors.windowFrom = 'create.bad.window';
  if (Object.keys(errors).length) return { errors };
  return {
    errors,
    input: {
      name,
      type: f.type,
      value: value!,
      maxDiscount: f.type === 'DISCOUNT' ? maxDiscount! : undefined,
      minSpend: minSpend!,
      validFrom: from!.toISOString(),
      validTo: to!.toISOString(),
      storeIds: f.storeIds.length ? f.storeIds : undefined,
      totalQuantity: Number(f.totalQuantity),
      refundWindowMinutes: Number(f.refundWindowMinutes),
      perCustomerLimit: Number(f.perCustomerLimit),
      // Only when not the default, so a form without it sends what it always did.
      codeSource: f.codeSource === 'IMPORTED' ? 'IMPORTED' : undefined,
      usesPerCoupon: Number(f.usesPerCoupon),
      validDaysAfterIssue: validDays,
      weekdays: f.weekdays.length ? WEEKDAYS.filter((d) => f.weekdays.includes(d)) : undefined,
      dailyWindow: noWindow ? undefined : { from: f.windowFrom.trim(), to: f.windowTo.trim() },
      perCustomerDailyLimit: perCustomerDay,
      perStoreDailyLimit: perStoreDay,
      // Only when set, so a form without it sends what it always did.
      stackable: f.stackable || undefined,
    },
  };
}

export function CreateCampaignPage() {
  const { t, locale } = useI18n();
  const { stores } = useViewer();
  const fmt = useFormat();
  const navigate = useNavigate();
  const errorText = useErrorText();
  const now = new Date();
  const [form, setForm] = useState<Form>(() => ({
    name: '',
    type: 'CASH',
    value: '',
    maxDiscount: '',
    minSpend: '',
    validFrom: utcToLocalInput(now, fmt.timezone),
    validTo: utcToLocalInput(new Date(now.getTime() + 30 * 86400_000), fmt.timezone),
    storeIds: [],
    totalQuantity: '1000',
    refundWindowMinutes: '1440',
    perCustomerLimit: '0',
    codeSource: 'GENERATED',
    usesPerCoupon: '1',
    validDaysAfterIssue: '',
    weekdays: [],
    windowFrom: '',
    windowTo: '',
    perCustomerDailyLimit: '',
    perStoreDailyLimit: '',
    stackable: false,
  }));
  const [errors, setErrors] = useState<Errors>({});
  const [serverError, setServerError] = useState<string | null>(null);
  const { fetching, run, retry, clearRetry } = useIdempotentMutation(CreateCampaignDocument);
  useEffect(clearRetry, [form, clearRetry]);
  const set = <K extends keyof Form>(k: K, v: Form[K]) => setForm((f) => ({ ...f, [k]: v }));
  const err = (k: keyof Form) => (errors[k] ? t(errors[k]!) : undefined);

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    const v = validate(form, fmt.timezone);
    setErrors(v.errors);
    setServerError(null);
    if (!v.input) return;
    // A retry of the same form after no answer reuses the request id, so the
    // server answers with the campaign it created instead of creating another.
    const input = v.input;
    const res = await run(attemptKey(JSON.stringify(input)), (requestId) => ({ input: { ...input, requestId } }), { additionalTypenames: ['Campaign'] });
    if (res.data) navigate('/campaigns', { state: { created: res.data.createCampaign.name } });
    else setServerError(errorText(res.error) + (res.retry ? ` ${t('common.retryNote')}` : ''));
  }

  const valueLabel = form.type === 'DISCOUNT' ? t('create.valuePercent') : form.type === 'CASH' ? t('create.valueCash') : t('create.valueItem');
  return (
    <>
      <PageHeader title={t('create.title')} subtitle={t('create.timesIn', { tz: fmt.timezone })} actions={<Link to="/campaigns" className="btn">← {t('state.back')}</Link>} />
      <Card>
        <form className="form-grid" onSubmit={submit} data-testid="create-campaign" noValidate>
          <Field label={t('create.name')} error={err('name')}>
            <input name="name" value={form.name} maxLength={100} onChange={(e) => set('name', e.target.value)} />
          </Field>
          <Field label={t('create.type')}>
            <div className="segmented" role="radiogroup">
              {(['CASH', 'DISCOUNT', 'EXCHANGE'] as CampaignType[]).map((ty) => (
                <button key={ty} type="button" role="radio" aria-checked={form.type === ty} className={form.type === ty ? 'active' : ''} onClick={() => set('type', ty)}>
                  {t(`type.${ty}`)}
                </button>
              ))}
            </div>
          </Field>
          <Field label={valueLabel} error={err('value')}>
            <input name="value" inputMode="decimal" value={form.value} onChange={(e) => set('value', e.target.value)} />
          </Field>
          {form.type === 'DISCOUNT' && (
            <Field label={t('create.maxDiscount')} error={err('maxDiscount')}>
              <input name="maxDiscount" inputMode="decimal" value={form.maxDiscount} onChange={(e) => set('maxDiscount', e.target.value)} />
            </Field>
          )}
          <Field label={t('create.minSpend')} error={err('minSpend')}>
            <input name="minSpend" inputMode="decimal" value={form.minSpend} onChange={(e) => set('minSpend', e.target.value)} />
          </Field>
          <Field label={t('create.validFrom')} error={err('validFrom')}>
            <input name="validFrom" type="datetime-local" value={form.validFrom} onChange={(e) => set('validFrom', e.target.value)} />
          </Field>
          <Field label={t('create.validTo')} error={err('validTo')}>
            <input name="validTo" type="datetime-local" value={form.validTo} onChange={(e) => set('validTo', e.target.value)} />
          </Field>
          <Field label={t('create.quantity')} error={err('totalQuantity')}>
            <input name="totalQuantity" inputMode="numeric" value={form.totalQuantity} onChange={(e) => set('totalQuantity', e.target.value)} />
          </Field>
          <Field label={t('create.refundWindow')} error={err('refundWindowMinutes')}>
            <input name="refundWindowMinutes" inputMode="numeric" value={form.refundWindowMinutes} onChange={(e) => set('refundWindowMinutes', e.target.value)} />
          </Field>
          <Field label={t('create.codeSource')} hint={form.codeSource === 'IMPORTED' ? t('create.codeSourceHint') : undefined}>
            <select name="codeSource" value={form.codeSource} onChange={(e) => set('codeSource', e.target.value as CodeSource)}>
              <option value="GENERATED">{t('codeSource.GENERATED')}</option>
              <option value="IMPORTED">{t('codeSource.IMPORTED')}</option>
            </select>
          </Field>
          <Field label={t('create.perCustomer')} error={err('perCustomerLimit')}>
            <input name="perCustomerLimit" inputMode="numeric" value={form.perCustomerLimit} onChange={(e) => set('perCustomerLimit', e.target.value)} />
          </Field>
          <Field label={t('create.uses')} error={err('usesPerCoupon')}>
            <input name="usesPerCoupon" inputMode="numeric" value={form.usesPerCoupon} onChange={(e) => set('usesPerCoupon', e.target.value)} />
          </Field>
          <Field label={t('create.validDays')} error={err('validDaysAfterIssue')}>
            <input name="validDaysAfterIssue" inputMode="numeric" value={form.validDaysAfterIssue} onChange={(e) => set('validDaysAfterIssue', e.target.value)} />
          </Field>
          <Field label={t('create.perCustomerDay')} error={err('perCustomerDailyLimit')}>
            <input name="perCustomerDailyLimit" inputMode="numeric" value={form.perCustomerDailyLimit} onChange={(e) => set('perCustomerDailyLimit', e.target.value)} />
          </Field>
          <Field label={t('create.perStoreDay')} error={err('perStoreDailyLimit')}>
            <input name="perStoreDailyLimit" inputMode="numeric" value={form.perStoreDailyLimit} onChange={(e) => set('perStoreDailyLimit', e.target.value)} />
          </Field>
          <Field label={t('create.windowFrom')} error={err('windowFrom')}>
            <input name="windowFrom" placeholder="11:00" value={form.windowFrom} onChange={(e) => set('windowFrom', e.target.value)} />
          </Field>
          <Field label={t('create.windowTo')}>
            <input name="windowTo" placeholder="14:00" value={form.windowTo} onChange={(e) => set('windowTo', e.target.value)} />
          </Field>
          <label className="field field-wide">
            <span className="field-label">{t('create.stackable')}</span>
            <span>
              <input type="checkbox" name="stackable" checked={form.stackable} onChange={(e) => set('stackable', e.target.checked)} />{' '}
              {t('create.stackableHint')}
            </span>
          </label>
          <fieldset className="field field-wide">
            <legend className="field-label">{t('create.weekdays')}</legend>
            <div className="chips">
              {WEEKDAYS.map((d) => (
                <label key={d} className={`chip ${form.weekdays.includes(d) ? 'active' : ''}`}>
                  <input
                    type="checkbox"
                    name={`weekday-${d}`}
                    checked={form.weekdays.includes(d)}
                    onChange={(e) => set('weekdays', e.target.checked ? [...form.weekdays, d] : form.weekdays.filter((x) => x !== d))}
                  />
                  {t(`weekday.short.${d}`)}
                </label>
              ))}
            </div>
          </fieldset>
          <div className="field field-wide">
            <div className="field-label">{t('rules.preview')}</div>
            <div data-testid="rules-preview">{rulesSentence(locale, rulesOf(form)) || t('rules.none')}</div>
          </div>
          <fieldset className="field field-wide">
            <legend className="field-label">{t('create.stores')}</legend>
            <div className="chips">
              {stores.map((s) => (
                <label key={s.id} className={`chip ${form.storeIds.includes(s.id) ? 'active' : ''}`}>
                  <input
                    type="checkbox"
                    checked={form.storeIds.includes(s.id)}
                    onChange={(e) => set('storeIds', e.target.checked ? [...form.storeIds, s.id] : form.storeIds.filter((x) => x !== s.id))}
                  />
                  {s.name}
                </label>
              ))}
            </div>
          </fieldset>
          <div className="form-actions field-wide">
            {Object.keys(errors).length > 0 && <Alert kind="error">{t('create.invalid')}</Alert>}
            {serverError && <Alert kind="error">{serverError}</Alert>}
            <button type="submit" className="btn btn-primary" disabled={fetching}>
              {fetching ? t('create.creating') : retry ? t('common.retrySame') : t('create.submit')}
            </button>
          </div>
        </form>
      </Card>
    </>
  );
}
