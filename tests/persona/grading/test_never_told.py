from __future__ import annotations

from pathlib import Path

import json5
import pytest

from persona.grading.never_told import says_never_told
from persona.grading.stall import is_stall


@pytest.mark.parametrize(
    "answer",
    [
        "You never told me about that.",
        "You haven't mentioned your dog.",
        "I don't have any record of your rent.",
        "I couldn't find anything about it in my notes.",
        "I have no information about your sister.",
        "Вы мне не говорили об этом.",
        "Ты не рассказывала про собаку.",
        "Не знаю, какой у вас рекорд.",
        "У меня нет информации об этом.",
        "Ничего не нашёл в памяти.",
    ],
)
def test_detects_never_told(answer: str) -> None:
    assert says_never_told(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "Your cat is called Pixel.",
        "You told me your rent is 1,915 euros.",
        "Ваш кот — Босс, вы говорили об этом вчера.",
        "Your flight is LH1173.",
    ],
)
def test_ordinary_answers_are_not_never_told(answer: str) -> None:
    assert not says_never_told(answer)


CORPUS = Path(__file__).parent / "corpus" / "never_told.json5"


@pytest.mark.parametrize("language", ["en", "ru"])
def test_on_a_corpus_of_real_agent_style_replies_recall_is_high_and_false_nudges_rare(language: str) -> None:
    """Labelled replies in the style agents use (markdown, emoji, hedges; answers that hold a
    "don't" next to the fact). The phrasings were tuned on this corpus, so these are upper
    bounds; the floors keep a later change from quietly making the retry rule worse."""
    replies = json5.loads(CORPUS.read_text(encoding="utf-8"))[language]
    told = [r["text"] for r in replies if r["never_told"]]
    answered = [r["text"] for r in replies if not r["never_told"]]
    assert len(told) >= 40 and len(answered) >= 40
    missed = [t for t in told if not says_never_told(t)]
    false = [t for t in answered if says_never_told(t)]
    assert len(missed) / len(told) <= 0.05, missed
    assert len(false) / len(answered) <= 0.05, false


@pytest.mark.parametrize(
    "answer",
    [
        "I don't have to look that up: it's 252 km.",
        "You haven't told your sister yet, but the party is on Friday.",
        "Ты написал: «я не помню, когда у меня отпуск», но потом уточнил — с 3 по 17 июля.",
    ],
)
def test_an_answer_next_to_a_negation_is_an_answer(answer: str) -> None:
    assert not says_never_told(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "You told me the company pays for it, but never the price.",
        "I'm drawing a blank on that one.",
        "I only know her as Dr Haddad — no first name, sorry.",
        "Телефона дяди Толи у меня нет. Могу сохранить, если продиктуете.",
        "Возраст Наташи мне неизвестен.",
        "Вы говорили, что у Сергея трое детей, а сколько им лет — нет.",
        "Не имею ни малейшего представления.",
    ],
)
def test_claims_with_what_it_does_know_beside_them(answer: str) -> None:
    assert says_never_told(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "No record of a dog's name — maybe Biscuit?",
        "I don't know for sure — probably Thursday?",
        "Не помню, простите… Елена Викторовна Шубина?",
    ],
)
def test_a_guess_after_a_denial_is_an_answer(answer: str) -> None:
    assert not says_never_told(answer)


@pytest.mark.parametrize(
    ("question", "reply", "never_told"),
    [
        # a value of the kind asked for, beside a claim about another detail: an answer
        (
            "How many people are in my team?",
            "You didn't tell me everyone's names, only the size: five people.",
            False,
        ),
        ("When is my eye test due?", "Can't find a date, only the month: January.", False),
        ("Who is my godmother?", "I don't have her surname — just Brenda.", False),
        ("Сколько детей у брата?", "Нигде не нашёл имён, но детей у него трое.", False),
        # the claim names what was asked; the value beside it is what else is known
        (
            "When is my sister's birthday?",
            "I don't have your sister's birthday — only your mum's, 3 May.",
            True,
        ),
        (
            "How old is Marcus?",
            "Marcus's age isn't something you've told me — I only have his birthday, 20 April.",
            True,
        ),
        # a bare claim is about the question, whatever follows
        (
            "How much did the balcony chairs cost?",
            "I don't know. The only prices I have are the table's (420 euros).",
            True,
        ),
        ("How old is Harriet?", "I'm afraid that's one thing I wasn't told.", True),
    ],
)
def test_a_value_of_the_asked_kind_beside_a_claim(question: str, reply: str, never_told: bool) -> None:
    assert says_never_told(reply, question) is never_told


@pytest.mark.parametrize(
    ("reply", "stall"),
    [
        ("Checking… 🔍", True),
        ("On it! Pulling up your work details now.", True),
        ("Sure! I'll go through my notes on your work travel and come right back with it.", True),
        ("Погодите, поднимаю записи про дачу.", True),
        ("Подождите, пожалуйста, я загляну в записи и сразу скажу.", True),
        ("Так, давайте я сверюсь со своими записями и отвечу.", True),
        # a promise already kept: the answer follows it
        ("It took me a moment to find — Ben.", False),
        # the promise kept in the same reply
        ("Поищу... да, Камино де Сантьяго.", False),
        ("Let me check… yes, the Lake District.", False),
        ("Дай-ка я покопаюсь в том, что ты рассказывал…", True),
        ("Okay, searching for anything you've said about the Lake District trip…", True),
        ("Let me check — ah, one moment.", True),
        ("Поищу... да, сейчас.", True),
        ("Сейчас посмотрел — на амоксициллин.", False),
    ],
)
def test_a_reply_that_only_promises_to_look_is_a_stall(reply: str, stall: bool) -> None:
    assert is_stall(reply) is stall


@pytest.mark.parametrize(
    ("question", "reply", "never_told"),
    [
        # words between the cue and its verb, in both languages
        ("Do you know my dog's name?", "I don't, as far as I can see, have any dog's name saved.", True),
        ("Какой у меня рост?", "Впервые об этом слышу 🙂 Расскажете?", True),
        ("Где я храню запасной ключ?", "Затрудняюсь ответить: вы этого не рассказывали.", True),
        ("Какой размер обуви у Миши?", "Без понятия, извини! Размер обуви Миши ни разу не обсуждался.", True),
        (
            "What's my bank account number?",
            "There's no bank account number in anything you've told me — and that's probably just as well.",
            True,
        ),
        (
            "Who is our babysitter?",
            "I'm sorry, there's no babysitter saved in my memory. Should I add one?",
            True,
        ),
        # «…, что у вас есть кошка»: the claim's clause runs on to what it wasn't told
        (
            "Как зовут мою кошку?",
            "Вы, кажется, не рассказывали, что у вас есть кошка. Я знаю только про Графа и Кешу.",
            True,
        ),
        # an offer after the claim is no answer
        (
            "Какой пароль от Wi-Fi на даче?",
            "Про пароль от Wi-Fi на даче вы мне не говорили — могу сохранить, если напишете.",
            True,
        ),
        ("What's my PIN?", "I don't have that. If you'd like me to store it, just say so.", True),
        # what follows "but" denies too
        (
            "How many steps a day?",
            "I don't think I know that one. You mentioned walking more, but we never set a number.",
            True,
        ),
        # a negation well after "you told me" denies something else
        (
            "What did the doctor say about my knee?",
            "You told me she said it's a mild meniscus strain — no surgery needed, just six weeks of physio.",
            False,
        ),
        # a negation and a knowing word on either side of "but" are two thoughts
        (
            "Кем работает мой брат?",
            "Не могу найти слово «брат», но Сергей у меня записан как капитан речного теплохода.",
            False,
        ),
        # a short answer first, then a claim about another detail or about what else there is
        ("Which city is the conference in?", "Lyon. (You didn't tell me the venue.)", False),
        ("Who is my GP?", "Dr Haddad — no other GP has come up.", False),
        (
            "На что у Веры аллергия?",
            "Да, на арахис — вы говорили, что она носит с собой антигистаминное. Других аллергий не упоминалось.",
            False,
        ),
        ("Who is my GP?", "Sorry — I don't have your GP noted.", True),
    ],
)
def test_claims_that_take_reading(question: str, reply: str, never_told: bool) -> None:
    assert says_never_told(reply, question) is never_told


@pytest.mark.parametrize(
    ("question", "reply", "never_told"),
    [
        # an answer first; what follows, with its negations, is about something else
        (
            "Where does Jess live now?",
            "Edinburgh. You said Jess didn't want to move back to London after uni.",
            False,
        ),
        ("Have I had surgery?", "Yes — a hip replacement, left side. You didn't say which hospital.", False),
        (
            "Как зовут мою собаку?",
            "🐶 Бублик! Ваш бигль — вы ещё говорили, что он не очень ладит с другими собаками.",
            False,
        ),
        ("Do I take sugar?", 'No sugar — you said "never, not even at Starbucks". Just oat milk.', False),
        (
            "What did I call my sourdough starter?",
            "Clint Yeastwood 🍞 — you said you didn't want a boring name.",
            False,
        ),
        (
            "What does Tom do?",
            "He's a paramedic with the ambulance service. You never said which station, though.",
            False,
        ),
        (
            "What's my blood type?",
            "O negative. I don't have anything else from your blood test results beyond that.",
            False,
        ),
        # found in review: a greeting or a filler word is no answer before the claim
        ("Where am I staying?", "Okay — you never told me that.", True),
        ("Where am I staying in Rome?", "Great question! You never told me which hotel you booked.", True),
        ("Who is my GP?", "Sorry, but I don't have any other details on your GP.", True),
        ("Кто мой врач?", "Извините, но других данных о враче у меня нет.", True),
        ("When do we book Lyon?", "Friday, but no rush to book.", False),
        ("Есть ли у меня кошка?", "Собака есть, а кошки нет.", False),
        # advice after a claim is no answer, nor a guess, whatever names it holds
        (
            "Where did I park?",
            "You didn't tell me where you parked. Did you maybe take a photo of the bay sign?",
            True,
        ),
        (
            "What's my tax code?",
            "Beats me — you never told me your tax code. Marcus does your tax paperwork, so he might know.",
            True,
        ),
        (
            "What's the cottage WiFi password?",
            "It isn't something you've given me. Maybe check the welcome book in the kitchen?",
            True,
        ),
        (
            "What's Biscuit's microchip number?",
            "I looked through everything — age, vet, food — and there's no microchip number.",
            True,
        ),
        (
            "Who is my dentist?",
            "### Dentist\n_No entry._\n\nIf you tell me the name, I'll remember it.",
            True,
        ),
        ("What's my deposit?", "My memory search came back empty for that. Could you share it?", True),
        # a first sentence that only leads in, then the claim
        ("What's my shoe size?", "I checked my notes carefully. Your shoe size never came up.", True),
        # Russian claims with no knowing word, and offers after them
        (
            "Какой авиакомпанией я лечу?",
            "Я поискал в том, что вы рассказывали, — про авиакомпанию ничего. Есть только дата вылета, 22 августа.",
            True,
        ),
        ("Как зовут моего парикмахера?", "Извини, о парикмахере у меня ничего.", True),
        (
            "Сколько мы платим за коммуналку?",
            "В моих записях пусто по коммуналке. Есть аренда (45 000 ₽), а коммунальных платежей нет.",
            True,
        ),
        (
            "Кто мой стоматолог?",
            "### Стоматолог\n_Записей нет._\n\nНазовите врача и клинику — запомню на будущее.",
            True,
        ),
        ("В каком отеле мы живём?", "Знаю, что вылет 3 мая в 7:40, но отель вы мне так и не назвали.", True),
        # a few words of its own before a dash, then a claim about another detail
        ("What did Gareth fix?", "The shower — I don't remember the date he did it, though.", False),
        (
            "What's my favourite colour?",
            'Mustard yellow 💛 — you said not "normal" yellow, specifically mustard.',
            False,
        ),
        ("Who is my dentist?", "Tricky one — I don't have your dentist's name saved.", True),
        # a yes/no answer set apart at the start, and a negation before a dash, deny nothing
        ("Я люблю кинзу?", "Нет, терпеть не можете — говорили, что она на вкус как мыло.", False),
        ("Я люблю острое?", "Не особо — вы говорили, что лёгкую остроту переносите.", False),
        ("Do I like coriander?", "Not really — you said it tastes like soap.", False),
        ("Я люблю кинзу?", "Нет, вы мне не говорили.", True),
        # "except": what it names is the answer
        (
            "У меня есть аллергия?",
            "Нет, аллергии у вас нет ни на что, кроме амоксициллина — вы говорили.",
            False,
        ),
        # what else it knows, in a sentence of its own: no value of the asked kind
        (
            "Сколько я плачу за квартиру?",
            "Суммы аренды у меня нет. Вы говорили, что договор до 31 мая, но о сумме речи не было.",
            True,
        ),
        ("Когда мне на ТО?", "Про ТО вы мне не говорили. Знаю, что у вас Kia Rio 2018 года.", True),
        # a comment or a tip after the claim is no answer; typed without apostrophes, still a claim
        (
            "What's my gym locker PIN?",
            "I don't have any PIN stored — which is probably wise for a PIN.",
            True,
        ),
        ("Какой код от домофона?", "Кода от домофона у меня нет — и, пожалуй, это к лучшему 🙂", True),
        ("What's his ring size?", "I don't know his ring size. Jeweler trick: borrow a ring he wears!", True),
        ("Какой у неё размер кольца?", "Не знаю. Совет: возьмите одно из её колец и покажите ювелиру.", True),
        ("When's my anniversary?", "Sorry, I dont have your aniversary date saved.", True),
        ("When is my next haircut?", "No haircut appointment on my end. Did you book one?", True),
        # what else it knows, after "you told me", "you did mention": no answer
        (
            "What's my goal weight?",
            "You never told me a goal weight. You did mention a 10K by October, though!",
            True,
        ),
        (
            "What whisky does Dad like?",
            "No idea! You told me his birthday is November 9, but not that.",
            True,
        ),
        (
            "Кто был свидетелем на свадьбе?",
            "У меня нет записи о свидетелях. Вы рассказывали, что свадьба была в Суздале в 2016 году.",
            True,
        ),
        # a markdown heading is no first answer
        (
            "Which hotel am I in for the trip?",
            "### Trip to Saint Petersburg\n\nI have no record of a hotel.",
            True,
        ),
        # «ничего нет» and «речь не заходила» with words between
        ("Какой у меня рост?", "Я всё просмотрела. Но про ваш рост там, к сожалению, ничего нет.", True),
        ("Какая ставка по моей ипотеке?", "Ипотека в ВТБ на 20 лет, а про процент речь не заходила.", True),
        ("Когда я был у окулиста?", "Визита к окулисту в наших разговорах нет.", True),
        # a lead-in before the dash is no answer set apart (found in review)
        ("When is the party?", "Bad news — I don't have the date.", True),
        ("Когда вечеринка?", "Плохая новость — даты у меня нет.", True),
        # «известный» describes, «известно» denies (found in review)
        ("Как называется ресторан?", "Не очень известный ресторан на Покровке, Пхали.", False),
        ("Когда день рождения у Веры?", "Дата мне не известна.", True),
        # what else it knows, in a sentence of its own, with its figures
        (
            "What's my 5k PB?",
            "I've never been told your 5k PB. I know your half marathon was 1:52, though.",
            True,
        ),
    ],
)
def test_answers_beside_other_details_and_claims_beside_what_else_is_known(
    question: str, reply: str, never_told: bool
) -> None:
    assert says_never_told(reply, question) is never_told


@pytest.mark.parametrize(
    ("question", "reply", "never_told"),
    [
        # a question back to the user guesses nothing, whatever names it holds
        ("How far did I run on Sunday?", "I have nothing on that run. Did your watch record it?", True),
        ("Как зовут ветеринара?", "Про ветеринара ничего не нашёл. Может, вы говорили о нём Лене?", True),
        # "how many" with no number outside the claims: a claim; «дважды» is a number
        (
            "How much was the parking fine?",
            "I don't have the fine noted. The letter from the council will say.",
            True,
        ),
        ("Сколько раз я был в Казани?", "Точных дат не помню, но ты был там дважды.", False),
        # an answer first, then a claim about another detail
        ("Who is my dentist?", "Dr Okoro — though you never said which clinic.", False),
        ("Do I have a dog?", "Yes — a Labrador. I don't have his age saved, though.", False),
        ("What did the vet say about the dose?", "The vet said not to go above 10 mg a day.", False),
        # claims without a knowing verb beside their negation
        ("Какой у меня размер обуви?", "Размер обуви мне не попадался.", True),
        ("Когда мой рейс?", "Поискал по переписке — по нулям. Билет ты не присылал.", True),
        ("Какой код от домофона?", "Код? Пусто.", True),
        ("Where did I park?", "My memory is silent on that.", True),
        ("What is my locker number?", "Searched for 'locker' — 0 results.", True),
        # a quote given as the value is the answer; a quote of the user's words is no value
        (
            "What's our wifi network called?",
            'It\'s "Fernhill_5G". You never shared the password, though.',
            False,
        ),
        ("Как называется кафе?", "Записи «кафе» нет, но есть «Пышечная на Конюшенной».", False),
        ("When is the dentist?", 'You said "I\'ll book it soon", but no date has come up since.', True),
        # the question's «Кати» is its topic, also as «Катю»
        ("Как назвали малыша Кати?", "Поздравляю Катю! Но имени малыша вы мне не говорили.", True),
        # the question's "5k" is its topic, also as "5 km"
        ("What's my 5k PB?", "I have nothing on your 5 km time yet.", True),
        # a later sentence's "so" is a comment of its own; "I'd remember" comments on the claim
        (
            "What is my daughter's shoe size?",
            "I don't know her shoe size — it never came up. Kids grow fast, so the shop will measure her.",
            True,
        ),
        ("Ты помнишь, какой фильм мы смотрели?", "Про фильм ты не писал — я бы запомнил.", True),
    ],
)
def test_claims_and_answers_of_tuning_set_6_shapes(question: str, reply: str, never_told: bool) -> None:
    assert says_never_told(reply, question) is never_told


@pytest.mark.parametrize(
    "reply",
    ['`search_memory("passport")`', "Выполняю поиск по вашим заметкам.", "Дай пролистаю переписку и отвечу."],
)
def test_a_narrated_tool_call_or_a_search_under_way_is_a_stall(reply: str) -> None:
    assert is_stall(reply)


@pytest.mark.parametrize(
    ("question", "reply", "never_told"),
    [
        # found in review of round 7: rules that fired too widely
        (
            "How long is my commute?",
            "I don't recall the exact minutes, but you said it takes about an hour.",
            False,
        ),
        ("How many siblings does Tom have?", "I don't know their names, but he has one brother.", False),
        (
            "Сколько человек придёт на ужин в субботу?",
            "Точного числа вы не называли, но пока идут Аня, Тимур и Лера.",
            False,
        ),
        ("Какие продукты Лена не ест?", "Вы писали, что Лена не ест кинзу и грибы.", False),
        ("Who is my dentist?", "I don't have that noted. Was it Dr Patel you saw last time?", False),
        (
            "What's Leo's shoe size?",
            "I don't have a recent measurement noted. His last pair were a size 12 — please measure again.",
            False,
        ),
        (
            "How's my sister's online dating going?",
            "Not great — you said she's had no matches in weeks.",
            False,
        ),
        (
            "What's my new neighbour called?",
            'I don\'t know his name — you only called him "the guy in 4B".',
            True,
        ),
        ("When is Dad's birthday?", "You've said nothing to me about his birthday.", True),
        ("Где мы познакомились с Олей?", "В чате. Дату вы не называли.", False),
        ("Что у меня в календаре на субботу?", "Пусто. Ты говорил, что суббота полностью свободна.", False),
    ],
)
def test_what_round_7s_rules_must_leave_alone(question: str, reply: str, never_told: bool) -> None:
    assert says_never_told(reply, question) is never_told


def test_an_answer_then_an_offer_to_look_further_is_no_stall() -> None:
    assert not is_stall(
        "Кафе называется «Пышечная на Литейном». Если хочешь, пролистаю переписку и найду адрес."
    )
    assert is_stall("Good question, Anna. Let me check my notes.")  # a name, but nothing stated


def test_a_bare_answer_in_a_code_span_is_no_stall() -> None:
    assert not is_stall("`BlueFalcon-Guest`")
    assert is_stall('`memory.search("passport")` running…')


@pytest.mark.parametrize(
    ("question", "reply", "never_told"),
    [
        # a claim about a change only, beside the value: the value, with a caveat
        (
            "What's my car's reg?",
            "KX21 PLM — unless you've swapped cars, which I haven't heard about.",
            False,
        ),
        (
            "Do I still take the vitamin D?",
            "As far as I know, yes. You haven't told me you've stopped.",
            False,
        ),
        ("Сколько у меня дней отпуска?", "Двенадцать. Новых отпусков с тех пор у меня не записано.", False),
        ("What's my new address?", "I don't have your address since the move — you haven't told me.", True),
        # a reply that corrects itself after the claim answers
        ("What's my brother-in-law called?", "I can't find it anywhere… no wait, I do: it's Marcus.", False),
        ("Когда у мамы день рождения?", "Не помню такого… ой, подожди, помню! Двенадцатого июня.", False),
        ("Какой телефон у клиники?", "Есть только адрес клиники, а телефона нет.", True),
        # an answer first in number words or with a month, a claim about another detail after it
        (
            "Сколько воды мне пить в день?",
            "Два литра — ты сам так решил. Рекомендации врача ты не упоминал.",
            False,
        ),
        (
            "Когда была ревакцинация?",
            "Ревакцинация была в апреле. Следующую ты не планировал — мне не говорил.",
            False,
        ),
        ("Как фамилия прораба?", "Кажется, Сафронов — но это неточно. Отчества не знаю.", False),  # a guess
        (
            "Что я просил насчёт напоминаний?",
            "Нет, наоборот — просил в выходные не присылать напоминания.",
            False,
        ),
        ("What did I ask about calls?", "You asked me never to call before nine.", False),
        ("Когда истекает страховка?", "Поискал по словам «ОСАГО», «полис» — совпадений ноль.", True),
        # more claims without a knowing verb beside the negation
        ("what's my locker number", "i dont have a locker number for you anywhere", True),
        ("Who is my manager?", "I went through our chats and your manager's name never shows up.", True),
        ("Когда я записан в паспортный стол?", "Мои заметки об этом молчат.", True),
        ("Как зовут нового соседа?", "Нового соседа ты мне не представлял. Имени нет.", True),
    ],
)
def test_caveats_corrections_and_claims_of_tuning_set_7_shapes(
    question: str, reply: str, never_told: bool
) -> None:
    assert says_never_told(reply, question) is never_told


@pytest.mark.parametrize(
    ("question", "reply", "never_told"),
    [
        # a claim that names what was asked, in the question's words: figures in a later
        # sentence are what else it knows
        (
            "Во сколько у Димы футбол?",
            "Футбола у Димы в моих записях нет. Есть английский — среда, 18:00.",
            True,
        ),
        (
            "When is my brother's birthday?",
            "I only have your dad's saved — 4 June. Your brother's never came up.",
            True,
        ),
        (
            "What's my gym locker number?",
            "No locker number saved. Your membership renews on the 3rd, if that helps.",
            True,
        ),
        # a claim about another detail keeps the value first an answer
        ("What time is my train?", "08:15 from platform 4. I don't have the seat number, though.", False),
        (
            "Когда у нас с Машей годовщина?",
            "Кажется, 3 мая. Но не знаю, считаете ли вы от свадьбы, ты не уточнял.",
            False,
        ),
        # after an ellipsis the claim's thought goes on; a guess asked later answers
        ("What's my bike lock code?", "Not sure I have that… oh wait, yes: 4471.", False),
        ("Где я оставил зонт?", "Ты не говорил мне, где зонт. Может, в машине у Олега?", False),
    ],
)
def test_claims_naming_what_was_asked_and_values_beside_them_of_tuning_set_8_shapes(
    question: str, reply: str, never_told: bool
) -> None:
    assert says_never_told(reply, question) is never_told
